import Logging
import ParsleyCore

/// `GET /dashboard/api/logs`: the recent lines of `LogRing` as rows of the dashboard's log table (time, level,
/// status, method, path, duration, request id, user, message), filtered by column. Parameters (all optional):
/// `level` (that level and more severe, Parse's names; default `verbose`), `status` (`2xx`, `4xx`, `5xx`, `errors` for
/// 4xx and 5xx, or a number), `method`, `path` (contained), `requestId`, `user` (exact), `text` (contained in the
/// line, any case), `minMs`, `from`/`until` (milliseconds since 1970), `after` (lines logged after this `sequence`:
/// the live tail), `sort=slow` (requests, slowest first; otherwise newest first), `limit` (default 200, at most 2000).
/// The dashboard's own calls to this endpoint and to the metrics are left out unless `path` names `/dashboard`.
struct DashboardLogs {
    /// One line as the table shows it.
    struct Row {
        var entry: LogRing.Entry
        var method: String?
        var path: String?
        var status: Int?
        var durationMs: Double?
        var requestId: String?
        var user: String?

        init(_ entry: LogRing.Entry) {
            self.entry = entry
            if let access = entry.access {
                method = access.method
                path = access.path
                status = access.status
                let (s, atto) = access.duration.components
                durationMs = Double(s) * 1000 + Double(atto / 10_000_000_000_000) / 100
                requestId = access.requestId
                user = access.user
                return
            }
            requestId = Self.text(entry.metadata["request_id"])
            // An access line logged through swift-log (a process without Parsley's log handler).
            if entry.text.description == "request", let m = Self.text(entry.metadata["method"]) {
                method = m
                path = Self.text(entry.metadata["path"])
                status = Self.text(entry.metadata["status"]).flatMap { Int($0) }
                durationMs = Self.text(entry.metadata["duration_ms"]).flatMap { Double($0) }
                user = Self.text(entry.metadata["user"])
            }
        }

        static func text(_ value: Logger.MetadataValue?) -> String? {
            switch value {
            case .string(let s)?: return s
            case .stringConvertible(let c)?: return c.description
            default: return nil
            }
        }

        var json: JSONValue {
            var o: [String: JSONValue] = [
                "sequence": .int(entry.sequence), "time": .int(entry.time), "level": .string(LogsRouter.parseName(entry.level)),
                "message": .string(entry.message),
            ]
            if let method { o["method"] = .string(method) }
            if let path { o["path"] = .string(LogRedactor.shared.redact(path)) }
            if let status { o["status"] = .int(Int64(status)) }
            if let durationMs { o["durationMs"] = .double(durationMs) }
            if let requestId { o["requestId"] = .string(requestId) }
            if let user { o["user"] = .string(user) }
            return .object(o)
        }
    }

    struct Filter {
        var minimum: Logger.Level = .debug
        var status: String?
        var method: String?
        var path: String?
        var requestId: String?
        var user: String?
        var text: String?
        var minMs: Double?
        var from: Int64?
        var until: Int64?
        var after: Int64?
        var slowFirst = false
        var limit = 200

        init(query: [String: String]) {
            func value(_ key: String) -> String? { query[key].flatMap { $0.isEmpty ? nil : $0 } }
            if let level = value("level") { minimum = LogsRouter.level(level) }
            status = value("status")?.lowercased()
            method = value("method")?.uppercased()
            path = value("path")
            requestId = value("requestId")
            user = value("user")
            text = value("text")?.lowercased()
            minMs = value("minMs").flatMap { Double($0) }
            from = value("from").flatMap { Int64($0) }
            until = value("until").flatMap { Int64($0) }
            after = value("after").flatMap { Int64($0) }
            slowFirst = value("sort") == "slow"
            limit = min(2000, max(1, value("limit").flatMap { Int($0) } ?? 200))
        }

        func statusMatches(_ status: Int?) -> Bool {
            guard let wanted = self.status else { return true }
            guard let status else { return false }
            switch wanted {
            case "errors": return status >= 400
            case "2xx", "3xx", "4xx", "5xx": return status / 100 == Int(String(wanted.prefix(1)))
            default: return Int(wanted) == status
            }
        }

        func matches(_ row: Row) -> Bool {
            let e = row.entry
            guard e.level >= minimum, e.time >= (from ?? .min), e.time <= (until ?? .max), e.sequence > (after ?? .min) else { return false }
            guard statusMatches(row.status) else { return false }
            // The dashboard's own polling (this table's live tail, the health charts) unless asked for by path.
            if path?.contains("/dashboard") != true, let p = row.path, p.hasPrefix("/dashboard/api/logs") || p.hasPrefix("/dashboard/api/metrics") {
                return false
            }
            if let method, row.method != method { return false }
            if let path, row.path?.contains(path) != true { return false }
            if let requestId, row.requestId != requestId { return false }
            if let user, row.user != user { return false }
            if let minMs, (row.durationMs ?? -1) < minMs { return false }
            if slowFirst, row.durationMs == nil { return false }
            if let text, !e.message.lowercased().contains(text) { return false }
            return true
        }
    }

    /// The rows `filter` keeps, newest (or slowest) first, with the newest `sequence` the ring holds.
    static func answer(_ ring: LogRing, _ filter: Filter) -> JSONValue {
        let all = ring.all()
        var rows = Array(all.reversed().lazy.map(Row.init).filter(filter.matches))
        if filter.slowFirst { rows.sort { ($0.durationMs ?? 0) > ($1.durationMs ?? 0) } }
        return [
            "results": .array(rows.prefix(filter.limit).map(\.json)),
            "latest": .int(all.last?.sequence ?? 0),
        ]
    }
}
