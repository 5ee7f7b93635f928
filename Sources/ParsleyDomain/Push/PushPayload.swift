public import ParsleyCore

/// Parse's push `data` for one installation: the alert and title in its language (`alert-fr`, `title-fr` for a
/// `localeIdentifier` starting with `fr`), the localised keys removed, and its own badge number.
public enum PushPayload {
    /// How `data.badge` changes the installations' badges: a number sets it, `"Increment"` (any case) or an
    /// Increment operation adds to it.
    public enum Badge: Sendable, Equatable {
        case set(Int64)
        case increment(Int64)
    }

    public static func badge(_ data: [String: JSONValue]) -> Badge? {
        switch data["badge"] {
        case .string(let s)? where s.lowercased() == "increment": return .increment(1)
        case .object(let o)? where o["__op"] == "Increment": return .increment(o["amount"]?.numberValue.map { Int64($0) } ?? 1)
        case let value?: return value.numberValue.map { .set(Int64($0)) }
        case nil: return nil
        }
    }

    /// The locales the data has texts for (`alert-fr`, `title-pt-BR` give `fr`, `pt-BR`).
    public static func locales(_ data: [String: JSONValue]) -> [String] {
        let found = data.keys.compactMap { key -> String? in
            for prefix in ["alert-", "title-"] where key.hasPrefix(prefix) { return String(key.dropFirst(prefix.count)) }
            return nil
        }
        // The longest first, so `pt-BR` wins over `pt` for `pt-BR`.
        return Set(found).sorted { ($0.count, $0) > ($1.count, $1) }
    }

    /// The data for a device with this `localeIdentifier` and badge (nil: the installation's badge is not touched).
    public static func data(_ data: [String: JSONValue], locales: [String], localeIdentifier: String?, badge: Int64?) -> [String: JSONValue] {
        var out = data.filter { key, _ in !(key.hasPrefix("alert-") || key.hasPrefix("title-")) }
        if let identifier = localeIdentifier.map({ String($0.map { $0 == "_" ? "-" : $0 }) }),
            let locale = locales.first(where: { identifier == $0 || identifier.hasPrefix($0 + "-") })
        {
            if let alert = data["alert-" + locale] { out["alert"] = alert }
            if let title = data["title-" + locale] { out["title"] = title }
        }
        if let badge { out["badge"] = .int(badge) }
        return out
    }
}
