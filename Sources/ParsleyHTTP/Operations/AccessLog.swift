import Logging
import NIOCore
import ParsleyCore
import Synchronization

/// One request as the access log tells it. Made of values the request already has, so keeping it (for
/// `/scriptlog`) copies nothing; its text is made when it is written or read.
struct AccessRecord: Sendable {
    var method: String
    var path: String
    var status: Int
    var duration: Duration
    var requestId: String
    var ip: Client
    /// The objectId of the session's user (nil: no session token); kept for the dashboard's log table, not written.
    var user: String? = nil

    /// The client's address: an IPv4 address is kept as its number and written digit by digit (no `inet_ntop`, no
    /// string per request); others as text.
    enum Client: Sendable {
        case v4(UInt32)
        case text(String)

        init(_ address: SocketAddress?) {
            switch address {
            case .v4(let a)?:
                // sockaddr_in: family (2 bytes), port (2), then the address (4, network order).
                self = withUnsafeBytes(of: a.address) { raw in .v4(raw[4..<8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }) }
            case let a?: self = .text(a.ipAddress ?? "-")
            case nil: self = .text("-")
            }
        }

        var text: String {
            var out: [UInt8] = []
            append(to: &out, json: false)
            return String(decoding: out, as: UTF8.self)
        }

        func append(to out: inout [UInt8], json: Bool) {
            switch self {
            case .v4(let n):
                if json { out.append(UInt8(ascii: "\"")) }
                for shift in [24, 16, 8, 0] {
                    if shift != 24 { out.append(UInt8(ascii: ".")) }
                    LogText.appendDigits(Int((n >> UInt32(shift)) & 0xFF), to: &out)
                }
                if json { out.append(UInt8(ascii: "\"")) }
            case .text(let s):
                if json { JSONWriter.writeString(s, into: &out) } else { LogText.appendLogfmt(s, to: &out) }
            }
        }
    }

    /// The duration in milliseconds with two decimals (`0.22`).
    var durationText: String {
        var out: [UInt8] = []
        LogText.appendMilliseconds(duration, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `duration_ms=0.22 ip=127.0.0.1 method=GET path=/parse/health request_id=abc status=200` (sorted keys, as
    /// every other line's metadata).
    func appendLogfmtFields(to out: inout [UInt8]) {
        out.append(contentsOf: "duration_ms=".utf8)
        LogText.appendMilliseconds(duration, to: &out)
        out.append(contentsOf: " ip=".utf8)
        ip.append(to: &out, json: false)
        out.append(contentsOf: " method=".utf8)
        LogText.appendLogfmt(method, to: &out)
        out.append(contentsOf: " path=".utf8)
        LogText.appendLogfmt(path, to: &out)
        out.append(contentsOf: " request_id=".utf8)
        LogText.appendLogfmt(requestId, to: &out)
        out.append(contentsOf: " status=".utf8)
        LogText.appendDigits(status, to: &out)
    }

    /// The whole line in `format`, newline included.
    func appendLine(format: ParsleyLogHandler.Format, label: String, time: Int64, to out: inout [UInt8], cache: inout (second: Int, text: [UInt8])) {
        switch format {
        case .text:
            LogText.appendTime(time, to: &out, cache: &cache)
            out.append(contentsOf: " info ".utf8)
            out.append(contentsOf: label.utf8)
            out.append(contentsOf: ": request ".utf8)
            appendLogfmtFields(to: &out)
        case .logfmt:
            out.append(contentsOf: "time=".utf8)
            LogText.appendTime(time, to: &out, cache: &cache)
            out.append(contentsOf: " level=info logger=".utf8)
            LogText.appendLogfmt(label, to: &out)
            out.append(contentsOf: " msg=request ".utf8)
            appendLogfmtFields(to: &out)
        case .json:
            out.append(contentsOf: #"{"time":""#.utf8)
            LogText.appendTime(time, to: &out, cache: &cache)
            out.append(contentsOf: #"","level":"info","logger":"#.utf8)
            JSONWriter.writeString(label, into: &out)
            out.append(contentsOf: #","msg":"request","duration_ms":"#.utf8)
            LogText.appendMilliseconds(duration, to: &out)
            out.append(contentsOf: #","ip":"#.utf8)
            ip.append(to: &out, json: true)
            out.append(contentsOf: #","method":"#.utf8)
            JSONWriter.writeString(method, into: &out)
            out.append(contentsOf: #","path":"#.utf8)
            JSONWriter.writeString(path, into: &out)
            out.append(contentsOf: #","request_id":"#.utf8)
            JSONWriter.writeString(requestId, into: &out)
            out.append(contentsOf: #","status":"#.utf8)
            LogText.appendDigits(status, to: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(10)
    }
}

/// The access log: one line per request at `info`. When the process logs through `ParsleyLogHandler` (the
/// server's own, installed by `parsley serve`), the line is written straight into `LogSink` in that handler's
/// format — no metadata dictionary, no string building, no Foundation; otherwise it goes through swift-log like any
/// other line, so an application that brings its own log handler still gets it.
public enum AccessLog {
    /// The format lines are written in directly; -1: through swift-log.
    private static let direct = Atomic<Int>(-1)

    /// Lines go straight to the sink in `format` (nil: through swift-log again).
    public static func writeDirectly(format: ParsleyLogHandler.Format?) {
        direct.store(format.flatMap { ParsleyLogHandler.Format.allCases.firstIndex(of: $0) } ?? -1, ordering: .relaxed)
    }

    static func log(_ record: AccessRecord, logger: Logger) {
        let index = direct.load(ordering: .relaxed)
        guard index >= 0 else {
            var metadata: Logger.Metadata = [
                "method": .string(record.method), "path": .string(record.path), "status": .stringConvertible(record.status),
                "duration_ms": .string(record.durationText),
                "ip": .string(record.ip.text),
            ]
            if let user = record.user { metadata["user"] = .string(user) }
            logger.info("request", metadata: metadata)
            return
        }
        var record = record
        let redactor = LogRedactor.shared
        record.path = redactor.redact(record.path)
        record.requestId = redactor.redact(record.requestId)
        let format = ParsleyLogHandler.Format.allCases[index]
        let time = LogText.nowMilliseconds()
        let label = logger.label
        LogSink.shared.append { out, sink in
            record.appendLine(format: format, label: label, time: time, to: &out, cache: &sink.timeCache)
        }
        LogRing.shared.append(access: record, label: label, time: time)
    }
}
