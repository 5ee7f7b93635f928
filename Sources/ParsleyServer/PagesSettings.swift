import Foundation
import Logging
import ParsleyCore
import ParsleyDomain

/// Parse Server's `customPages` (the app's own page URLs the email flows redirect to) and `pages` (the pages router),
/// from their JSON and then their single `PARSE_SERVER_CUSTOM_PAGES_*` and `PARSE_SERVER_PAGES_*` variables.
extension ServerSettings {
    /// `customPages` keys and their variables. `expiredVerificationLink` and `invalidPasswordResetLink` are listed by
    /// Parse Server 7 but its routes never use them; they are accepted and unused here too.
    static let customPageParts: [(String, String)] = [
        ("choosePassword", "PARSE_SERVER_CUSTOM_PAGES_CHOOSE_PASSWORD"),
        ("expiredVerificationLink", "PARSE_SERVER_CUSTOM_PAGES_EXPIRED_VERIFICATION_LINK"),
        ("invalidLink", "PARSE_SERVER_CUSTOM_PAGES_INVALID_LINK"),
        ("invalidPasswordResetLink", "PARSE_SERVER_CUSTOM_PAGES_INVALID_PASSWORD_RESET_LINK"),
        ("invalidVerificationLink", "PARSE_SERVER_CUSTOM_PAGES_INVALID_VERIFICATION_LINK"),
        ("linkSendFail", "PARSE_SERVER_CUSTOM_PAGES_LINK_SEND_FAIL"),
        ("linkSendSuccess", "PARSE_SERVER_CUSTOM_PAGES_LINK_SEND_SUCCESS"),
        ("parseFrameURL", "PARSE_SERVER_CUSTOM_PAGES_PARSE_FRAME_URL"),
        ("passwordResetSuccess", "PARSE_SERVER_CUSTOM_PAGES_PASSWORD_RESET_SUCCESS"),
        ("verifyEmailSuccess", "PARSE_SERVER_CUSTOM_PAGES_VERIFY_EMAIL_SUCCESS"),
    ]

    /// `pages` keys and their variables.
    static let pagesParts: [(String, String)] = [
        ("customRoutes", "PARSE_SERVER_PAGES_CUSTOM_ROUTES"),
        ("customUrls", "PARSE_SERVER_PAGES_CUSTOM_URLS"),
        ("enableLocalization", "PARSE_SERVER_PAGES_ENABLE_LOCALIZATION"),
        ("enableRouter", "PARSE_SERVER_PAGES_ENABLE_ROUTER"),
        ("forceRedirect", "PARSE_SERVER_PAGES_FORCE_REDIRECT"),
        ("localizationFallbackLocale", "PARSE_SERVER_PAGES_LOCALIZATION_FALLBACK_LOCALE"),
        ("localizationJsonPath", "PARSE_SERVER_PAGES_LOCALIZATION_JSON_PATH"),
        ("pagesEndpoint", "PARSE_SERVER_PAGES_PAGES_ENDPOINT"),
        ("pagesPath", "PARSE_SERVER_PAGES_PAGES_PATH"),
        ("placeholders", "PARSE_SERVER_PAGES_PLACEHOLDERS"),
    ]

    static func applyPagesSettings(to options: inout ParseServerOptions, values: OptionValues, logger: Logger) throws {
        var pages = PagesOptions()
        // customPages: URLs.
        var custom: [String: JSONValue] = [:]
        var customName = OptionTable.spec("customPages").shownName
        if let (json, name) = try values.object("customPages") {
            custom = json
            customName = name
        }
        for (key, _) in customPageParts {
            if let (text, _) = values.part("customPages", key) { custom[key] = .string(text) }
        }
        for (key, value) in custom {
            guard customPageParts.contains(where: { $0.0 == key }) else {
                logger.warning("Parse Server option customPages (\(customName)): ignoring the unknown page \(key)")
                continue
            }
            if value.isNull { continue }
            guard let url = value.stringValue else { throw Invalid(description: "\(customName): \(key) must be a URL") }
            if !url.isEmpty { pages.customPages[key] = url }
        }

        // pages: the pages router.
        var json: [String: JSONValue] = [:]
        var name = OptionTable.spec("pages").shownName
        if let (object, n) = try values.object("pages") {
            json = object
            name = n
        }
        for (key, _) in pagesParts {
            if let (text, _) = values.part("pages", key) { json[key] = OptionValues.json(text) }
        }
        func bool(_ key: String) throws -> Bool? {
            guard let value = json[key], !value.isNull else { return nil }
            if let b = value.boolValue { return b }
            if let text = value.stringValue { return try OptionValues.bool(text, name: "\(name): \(key)") }
            throw Invalid(description: "\(name): \(key) must be true or false")
        }
        func string(_ key: String) throws -> String? {
            guard let value = json[key], !value.isNull else { return nil }
            guard let text = value.stringValue else { throw Invalid(description: "\(name): \(key) must be a string") }
            return text.isEmpty ? nil : text
        }
        for key in json.keys where !pagesParts.contains(where: { $0.0 == key }) {
            logger.warning("Parse Server option pages (\(name)): ignoring the unknown key \(key)")
        }
        pages.enableRouter = try bool("enableRouter") ?? false
        pages.forceRedirect = try bool("forceRedirect") ?? false
        if let endpoint = try string("pagesEndpoint") {
            var e = Substring(endpoint)
            while e.hasPrefix("/") { e.removeFirst() }
            while e.hasSuffix("/") { e.removeLast() }
            guard !e.isEmpty, !e.contains("/"), e.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." }) else {
                throw Invalid(description: "\(name): pagesEndpoint must be one path segment (letters, digits, -, _, .)")
            }
            pages.pagesEndpoint = String(e)
        }
        if let path = try string("pagesPath") {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw Invalid(description: "\(name): pagesPath is not a readable folder")
            }
            var p = URL(fileURLWithPath: path).standardizedFileURL.path
            while p.count > 1, p.hasSuffix("/") { p.removeLast() }
            pages.pagesPath = p
        }
        if let value = json["customUrls"], !value.isNull {
            guard case .object(let urls) = value else { throw Invalid(description: "\(name): customUrls must be a JSON object") }
            for (page, url) in urls where !url.isNull {
                guard PagesPageIds.all.contains(page) else {
                    logger.warning("Parse Server option pages (\(name)): ignoring customUrls.\(page), not a page of the pages router")
                    continue
                }
                guard let text = url.stringValue else { throw Invalid(description: "\(name): customUrls.\(page) must be a URL") }
                if !text.isEmpty { pages.customUrls[page] = text }
            }
        }
        if let value = json["placeholders"], !value.isNull {
            guard case .object(let placeholders) = value else {
                throw Invalid(description: "\(name): placeholders must be a JSON object (functions are JavaScript)")
            }
            pages.placeholders = placeholders
        }
        if try bool("enableLocalization") == true {
            let message =
                "Parse Server option pages (\(name)): enableLocalization is not supported and is ignored (with localizationJsonPath "
                + "and localizationFallbackLocale): pages are served in the one language of their files"
            logger.warning("\(message)")
        }
        if case .array(let routes)? = json["customRoutes"], !routes.isEmpty {
            logger.warning("Parse Server option pages (\(name)): customRoutes are JavaScript route handlers and are ignored")
        } else if let routes = json["customRoutes"], !routes.isNull, routes.arrayValue == nil {
            logger.warning("Parse Server option pages (\(name)): customRoutes are JavaScript route handlers and are ignored")
        }
        if !pages.enableRouter, pages.pagesPath != nil || !pages.customUrls.isEmpty || pages.forceRedirect {
            logger.warning("Parse Server option pages (\(name)): pagesPath, customUrls and forceRedirect take effect with enableRouter only")
        }
        options.pages = pages
    }
}

/// The page ids of the pages router (`pages.customUrls` keys).
enum PagesPageIds {
    static let all: Set<String> = [
        "passwordReset", "passwordResetSuccess", "passwordResetLinkInvalid", "emailVerificationSuccess", "emailVerificationSendFail",
        "emailVerificationSendSuccess", "emailVerificationLinkInvalid", "emailVerificationLinkExpired",
    ]
}
