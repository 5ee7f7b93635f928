import Foundation
import ParsleyCore
import ParsleyDomain

extension ServerSettings {
    /// Parse Server's `liveQuery` (`{"classNames": [...]}`, or `PARSE_SERVER_LIVEQUERY_CLASSNAMES` as a comma list) and
    /// `liveQueryServerOptions` (`websocketTimeout` in milliseconds).
    static func applyLiveQuerySettings(to options: inout ParseServerOptions, values: OptionValues) throws {
        var names: [String] = []
        if let (o, name) = try values.object("liveQuery") {
            if let list = o["classNames"] {
                guard let items = list.arrayValue, items.allSatisfy({ $0.stringValue != nil }) else {
                    throw Invalid(description: "\(name): classNames must be an array of class names")
                }
                names = items.compactMap(\.stringValue)
            }
        }
        if let (text, _) = values.part("liveQuery", "classNames") {
            if let parsed = try? JSONParser.parse(text), let items = parsed.arrayValue {
                names = items.compactMap(\.stringValue)
            } else {
                names = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            }
        }
        for (i, name) in names.enumerated() where (try? Regex("^(?:\(name))$")) == nil {
            throw Invalid(
                description: "liveQuery.classNames (PARSE_SERVER_LIVE_QUERY): entry \(i + 1) is neither a class name nor a regular expression")
        }
        options.liveQuery.classNames = names
        if let (o, name) = try values.object("liveQueryServerOptions"), let timeout = o["websocketTimeout"] {
            guard let ms = timeout.integerValue, ms >= 100 else {
                throw Invalid(description: "\(name): websocketTimeout must be a number of milliseconds (at least 100)")
            }
            options.liveQuery.pingInterval = .milliseconds(ms)
        }
    }
}
