import Foundation

/// English plurals as npm `pluralize` 8 makes them, which Parse Server uses to name find queries (`gameScore` →
/// `gameScores`, `person` → `people`, `sheep` → `sheep`): its irregular words, its uncountable words and its suffix
/// rules, tried from the last added to the first, the replacement taking the case of what it replaces. The tables
/// are pluralize 8's; the code is ours.
enum Pluralizer {
    static func plural(_ word: String) -> String {
        let token = word.lowercased()
        if irregularPlurals.contains(token) { return restoreCase(word, token) }
        if let plural = irregular[token] { return restoreCase(word, plural) }
        if token.isEmpty || uncountable.contains(token) { return word }
        for rule in rules.reversed() {
            let range = NSRange(word.startIndex..., in: word)
            guard let match = rule.pattern.firstMatch(in: word, range: range), let matched = Range(match.range, in: word) else { continue }
            let result = interpolate(rule.replacement, match, in: word)
            let replacement: String
            if matched.isEmpty {
                // An empty match (`s?$`) takes the case of the letter before it.
                let before = matched.lowerBound > word.startIndex ? String(word[word.index(before: matched.lowerBound)]) : ""
                replacement = restoreCase(before, result)
            } else {
                replacement = restoreCase(String(word[matched]), result)
            }
            return word.replacingCharacters(in: matched, with: replacement)
        }
        return word
    }

    /// `$0`…`$99` in `template` replaced by the match's groups (a group that did not take part is empty).
    static func interpolate(_ template: String, _ match: NSTextCheckingResult, in word: String) -> String {
        var out = ""
        var characters = Array(template)
        var i = 0
        while i < characters.count {
            if characters[i] == "$", i + 1 < characters.count, let digit = characters[i + 1].wholeNumberValue {
                var index = digit
                var length = 2
                if i + 2 < characters.count, let second = characters[i + 2].wholeNumberValue, index * 10 + second < match.numberOfRanges {
                    index = index * 10 + second
                    length = 3
                }
                if index < match.numberOfRanges, let range = Range(match.range(at: index), in: word) { out += word[range] }
                i += length
                continue
            }
            out.append(characters[i])
            i += 1
        }
        characters.removeAll()
        return out
    }

    /// `token` with the case of `word`: as it is, all lower, all upper, or title case.
    static func restoreCase(_ word: String, _ token: String) -> String {
        if word == token { return token }
        if word == word.lowercased() { return token.lowercased() }
        if word == word.uppercased() { return token.uppercased() }
        if let first = word.first, String(first) == String(first).uppercased() {
            return token.prefix(1).uppercased() + token.dropFirst().lowercased()
        }
        return token.lowercased()
    }

    struct Rule {
        let pattern: NSRegularExpression
        let replacement: String
    }

    static func rule(_ pattern: String, _ replacement: String) -> Rule {
        // The tables are constants: a pattern that does not compile is a programming error caught by the tests.
        Rule(pattern: try! NSRegularExpression(pattern: pattern, options: [.caseInsensitive]), replacement: replacement)
    }

    static let irregularPairs: [(String, String)] = [
        ("i", "we"), ("me", "us"), ("he", "they"), ("she", "they"), ("them", "them"), ("myself", "ourselves"), ("yourself", "yourselves"),
        ("itself", "themselves"), ("herself", "themselves"), ("himself", "themselves"), ("themself", "themselves"), ("is", "are"),
        ("was", "were"), ("has", "have"), ("this", "these"), ("that", "those"), ("echo", "echoes"), ("dingo", "dingoes"),
        ("graffito", "graffiti"), ("volcano", "volcanoes"), ("tornado", "tornadoes"), ("torpedo", "torpedoes"), ("genus", "genera"),
        ("viscus", "viscera"), ("stigma", "stigmata"), ("stoma", "stomata"), ("dogma", "dogmata"), ("lemma", "lemmata"),
        ("schema", "schemata"), ("anathema", "anathemata"), ("ox", "oxen"), ("axe", "axes"), ("die", "dice"), ("yes", "yeses"),
        ("foot", "feet"), ("eave", "eaves"), ("goose", "geese"), ("tooth", "teeth"), ("quiz", "quizzes"), ("human", "humans"),
        ("proof", "proofs"), ("carve", "carves"), ("valve", "valves"), ("looey", "looies"), ("thief", "thieves"), ("groove", "grooves"),
        ("pickaxe", "pickaxes"), ("passerby", "passersby"),
    ]
    static let irregular = Dictionary(irregularPairs, uniquingKeysWith: { _, last in last })
    static let irregularPlurals = Set(irregularPairs.map(\.1))

    static let uncountable: Set<String> = [
        "adulthood", "advice", "agenda", "aid", "aircraft", "alcohol", "ammo", "analytics", "anime", "athletics", "audio", "bison", "blood",
        "bream", "buffalo", "butter", "carp", "cash", "chassis", "chess", "clothing", "cod", "commerce", "cooperation", "corps", "debris",
        "diabetes", "digestion", "elk", "energy", "equipment", "excretion", "expertise", "firmware", "flounder", "fun", "gallows", "garbage",
        "hardware", "headquarters", "health", "herpes", "highjinks", "homework", "housework", "information", "jeans", "justice", "kudos",
        "labour", "literature", "machinery", "mackerel", "mail", "media", "mews", "moose", "music", "mud", "manga", "news", "only",
        "personnel", "pike", "plankton", "pliers", "police", "pollution", "premises", "rain", "research", "rice", "salmon", "scissors",
        "series", "sewage", "shambles", "shrimp", "software", "staff", "swine", "tennis", "traffic", "transportation", "trout", "tuna",
        "wealth", "welfare", "whiting", "wildebeest", "wildlife", "you",
    ]

    /// The suffix rules in pluralize's order, then its uncountable patterns (added after them, so tried first).
    static let rules: [Rule] = [
        rule("s?$", "s"),
        rule("[^\\u0000-\\u007F]$", "$0"),
        rule("([^aeiou]ese)$", "$1"),
        rule("(ax|test)is$", "$1es"),
        rule("(alias|[^aou]us|t[lm]as|gas|ris)$", "$1es"),
        rule("(e[mn]u)s?$", "$1s"),
        rule("([^l]ias|[aeiou]las|[ejzr]as|[iu]am)$", "$1"),
        rule("(alumn|syllab|vir|radi|nucle|fung|cact|stimul|termin|bacill|foc|uter|loc|strat)(?:us|i)$", "$1i"),
        rule("(alumn|alg|vertebr)(?:a|ae)$", "$1ae"),
        rule("(seraph|cherub)(?:im)?$", "$1im"),
        rule("(her|at|gr)o$", "$1oes"),
        rule(
            "(agend|addend|millenni|dat|extrem|bacteri|desiderat|strat|candelabr|errat|ov|symposi|curricul|automat|quor)(?:a|um)$", "$1a"),
        rule("(apheli|hyperbat|periheli|asyndet|noumen|phenomen|criteri|organ|prolegomen|hedr|automat)(?:a|on)$", "$1a"),
        rule("sis$", "ses"),
        rule("(?:(kni|wi|li)fe|(ar|l|ea|eo|oa|hoo)f)$", "$1$2ves"),
        rule("([^aeiouy]|qu)y$", "$1ies"),
        rule("([^ch][ieo][ln])ey$", "$1ies"),
        rule("(x|ch|ss|sh|zz)$", "$1es"),
        rule("(matr|cod|mur|sil|vert|ind|append)(?:ix|ex)$", "$1ices"),
        rule("\\b((?:tit)?m|l)(?:ice|ouse)$", "$1ice"),
        rule("(pe)(?:rson|ople)$", "$1ople"),
        rule("(child)(?:ren)?$", "$1ren"),
        rule("eaux$", "$0"),
        rule("m[ae]n$", "men"),
        rule("^thou$", "you"),
        rule("pok[eé]mon$", "$0"),
        rule("[^aeiou]ese$", "$0"),
        rule("deer$", "$0"),
        rule("fish$", "$0"),
        rule("measles$", "$0"),
        rule("o[iu]s$", "$0"),
        rule("pox$", "$0"),
        rule("sheep$", "$0"),
    ]
}
