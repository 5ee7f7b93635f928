public import Logging
public import Foundation
import NIOConcurrencyHelpers
import ParsleyCore

/// One line per log event on standard output, as plain text (the default), logfmt or JSON
/// (`PARSLEY_LOG_FORMAT`). Every line goes through `LogRedactor` first, so a configured secret or a session
/// token never reaches the log even if some message carried one by mistake.
public struct ParsleyLogHandler: LogHandler {
    public enum Format: String, Sendable, CaseIterable {
        case text, logfmt, json
    }

    public let label: String
    public let format: Format
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?

    public init(label: String, format: Format) {
        self.label = label
        self.format = format
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let provided = metadataProvider?.get() { all.merge(provided) { _, new in new } }
        if let extra = event.metadata { all.merge(extra) { _, new in new } }
        let now = LogText.nowMilliseconds()
        let line = Self.render(
            format: format, milliseconds: now, level: event.level, label: label, message: event.message.description, metadata: all)
        LogSink.shared.append(bytes: LogRedactor.shared.redact(line).utf8 + [10])
        LogRing.shared.append(event.level, label: label, event.message, metadata: all, time: now)
    }

    public static func render(
        format: Format, time: Date, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata
    ) -> String {
        render(
            format: format, milliseconds: Int64((time.timeIntervalSince1970 * 1000).rounded(.down)), level: level, label: label, message: message,
            metadata: metadata)
    }

    static func render(
        format: Format, milliseconds: Int64, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata
    ) -> String {
        var cache: (second: Int, text: [UInt8]) = (-1, [])
        var stampBytes: [UInt8] = []
        LogText.appendTime(milliseconds, to: &stampBytes, cache: &cache)
        let stamp = String(decoding: stampBytes, as: UTF8.self)
        let entries = metadata.sorted { $0.key < $1.key }
        switch format {
        case .text:
            var line = "\(stamp) \(level) \(label): \(message)"
            for (k, v) in entries { line += " \(k)=\(logfmtValue(v.description))" }
            return line
        case .logfmt:
            var line = "time=\(stamp) level=\(level) logger=\(logfmtValue(label)) msg=\(logfmtValue(message))"
            for (k, v) in entries { line += " \(k)=\(logfmtValue(v.description))" }
            return line
        case .json:
            var line =
                "{\"time\":\(jsonString(stamp)),\"level\":\(jsonString(level.rawValue)),\"logger\":\(jsonString(label)),"
                + "\"msg\":\(jsonString(message))"
            for (k, v) in entries where !["time", "level", "logger", "msg"].contains(k) {
                line += ",\(jsonString(k)):\(jsonValue(v))"
            }
            return line + "}"
        }
    }

    /// A logfmt value (`LogText.appendLogfmt`'s rules) as a string.
    static func logfmtValue(_ s: String) -> String {
        var out: [UInt8] = []
        LogText.appendLogfmt(s, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func jsonValue(_ v: Logger.Metadata.Value) -> String {
        switch v {
        case .string(let s): return jsonString(s)
        case .stringConvertible(let c):
            if let n = c as? any BinaryInteger { return "\(n)" }
            if let d = c as? Double, d.isFinite { return "\(d)" }
            if let b = c as? Bool { return b ? "true" : "false" }
            return jsonString(c.description)
        case .array(let a): return "[" + a.map(jsonValue).joined(separator: ",") + "]"
        case .dictionary(let d):
            return "{" + d.sorted { $0.key < $1.key }.map { "\(jsonString($0.key)):\(jsonValue($0.value))" }.joined(separator: ",") + "}"
        }
    }

    /// A JSON string literal, escaped by the same writer as every API response.
    static func jsonString(_ s: String) -> String { JSONWriter.string(.string(s)) }
}

/// Removes secrets from log lines: every registered secret (master key, client keys, SMTP password) and
/// anything shaped like a Parse session token (`r:` + 32 hex digits).
public final class LogRedactor: Sendable {
    public static let shared = LogRedactor()
    public init() {}
    private let secrets = NIOLockedValueBox<[String]>([])

    public func register(_ secret: String?) {
        guard let secret, secret.count >= 4 else { return }
        secrets.withLockedValue { if !$0.contains(secret) { $0.append(secret) } }
    }

    /// True when `text` holds no registered secret and nothing shaped like a session token (then it needs no
    /// `redact`). Works on the bytes; cheap enough for every request's path.
    public func isClean(_ text: String) -> Bool {
        var utf8 = text
        if utf8.withUTF8(Self.hasSessionToken) { return false }
        return !secrets.withLockedValue { $0 }.contains { text.containsUTF8($0) }
    }

    static func hasSessionToken(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count >= 34 else { return false }
        for i in 0...(bytes.count - 34) where bytes[i] == UInt8(ascii: "r") && bytes[i + 1] == UInt8(ascii: ":") {
            if bytes[(i + 2)..<(i + 34)].allSatisfy(isHex) { return true }
        }
        return false
    }

    static func isHex(_ b: UInt8) -> Bool { (b >= 48 && b <= 57) || (b >= 97 && b <= 102) || (b >= 65 && b <= 70) }

    /// `line` with its secrets and session tokens replaced by `[redacted]` (itself, uncopied, when it has none).
    public func redact(_ line: String) -> String {
        guard !isClean(line) else { return line }
        var out = line
        for s in secrets.withLockedValue({ $0 }) where out.contains(s) {
            out = out.replacingOccurrences(of: s, with: "[redacted]")
        }
        guard out.contains("r:") else { return out }
        return Self.redactSessionTokens(out)
    }

    static func redactSessionTokens(_ s: String) -> String {
        let bytes = Array(s.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "r"), i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: ":"), i + 34 <= bytes.count,
                bytes[(i + 2)..<(i + 34)].allSatisfy(isHex)
            {
                out += Array("r:[redacted]".utf8)
                i += 34
                continue
            }
            out.append(bytes[i])
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}
