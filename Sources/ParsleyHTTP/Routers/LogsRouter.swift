import Foundation
import Logging
import ParsleyCore
import ParsleyDomain

/// `GET /scriptlog` (master key): the recent log lines of this server process as Parse Server answers them, a JSON
/// array of `{"level", "message", "timestamp"}`. Parameters: `level` (Parse's names: `error`, `warn`, `info`
/// (default), `verbose`, `debug`, `silly`; that level and more severe), `n` or `size` (default 10), `from` and `until`
/// (dates), `order` (`desc`, the default, or `asc`).
struct LogsRouter: ParseRouter {
    private var table = RouteTable()

    init(ring: LogRing) {
        table.master(.get, "scriptlog") { req, _ in
            let level = Self.level(req.params["level"]?.stringValue ?? "info")
            let limit =
                req.params["n"]?.integerValue ?? req.params["size"]?.integerValue
                ?? req.params["n"]?.stringValue.flatMap { Int($0) } ?? req.params["size"]?.stringValue.flatMap { Int($0) } ?? 10
            let entries = ring.recent(
                minimum: level, from: Self.time(req.params["from"]), until: Self.time(req.params["until"]), limit: min(limit, 10_000),
                ascending: req.params["order"]?.stringValue == "asc")
            let lines: [JSONValue] = entries.map { e in
                ["level": .string(Self.parseName(e.level)), "message": .string(e.message), "timestamp": .string(ParseDate(milliseconds: e.time).iso)]
            }
            return ParseResponse(body: .array(lines))
        }
    }

    var routes: RouteTable { table }

    /// Parse Server's (winston's) level names to swift-log's.
    static func level(_ name: String) -> Logger.Level {
        switch name.lowercased() {
        case "error": return .error
        case "warn", "warning": return .warning
        case "verbose", "debug": return .debug
        case "silly", "trace": return .trace
        default: return .info
        }
    }

    static func parseName(_ level: Logger.Level) -> String {
        switch level {
        case .trace: return "silly"
        case .debug: return "verbose"
        case .info, .notice: return "info"
        case .warning: return "warn"
        case .error, .critical: return "error"
        }
    }

    /// A date parameter: ISO text, `{"__type":"Date"}` or milliseconds.
    static func time(_ value: JSONValue?) -> Int64? {
        switch value {
        case .string(let s)?: return ParseDate(iso: s)?.milliseconds ?? ParseDate(iso: s + "T00:00:00.000Z")?.milliseconds
        case .int(let n)?: return n
        case .object(let o)?: return o["iso"]?.stringValue.flatMap(ParseDate.init(iso:))?.milliseconds
        default: return nil
        }
    }
}
