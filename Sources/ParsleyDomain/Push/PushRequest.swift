import Foundation
public import ParsleyCore

/// A `POST /push` body, checked as Parse Server checks it (every refusal is 115, `PUSH_MISCONFIGURED`):
/// `where` (a query on `_Installation`) or `channels` (exactly one), `data`, `push_time` (ISO date or seconds since
/// 1970; without a time zone it is a local time: each installation gets it at that time in its `timeZone`),
/// `expiration_time` (ISO date or seconds) or `expiration_interval` (seconds after the push time).
public struct PushRequest: Sendable, Equatable {
    public var whereValue: [String: JSONValue]
    public var data: [String: JSONValue]
    /// When to send (the earliest, for a local-time push).
    public var pushTime: ParseDate
    /// Whether `push_time` was given (the push is then `scheduled` until due).
    public var scheduled: Bool
    /// A local-time push: milliseconds after 1970 of the wall-clock time, to be read in each installation's zone.
    public var localTime: Int64?
    /// The text of `push_time` as given (`_PushStatus.pushTime`), or the send time.
    public var pushTimeText: String
    public var expirationTime: ParseDate?
    public var expirationInterval: Int64?

    static func misconfigured(_ message: String) -> ParseError { ParseError(.pushMisconfigured, message) }

    public init(body: [String: JSONValue], now: ParseDate = .now) throws(ParseError) {
        let channels = body["channels"]
        let whereGiven = body["where"]
        switch (whereGiven, channels) {
        case (.some, .some): throw Self.misconfigured("Channels and query can not be set at the same time.")
        case (nil, nil): throw Self.misconfigured("Sending a push requires either \"channels\" or a \"where\" query.")
        case (.some(let w), nil):
            guard case .object(let o) = w else { throw Self.misconfigured("where must be a JSON object") }
            whereValue = o
        case (nil, .some(let c)):
            guard case .array(let list) = c, list.allSatisfy({ $0.stringValue != nil }) else {
                throw Self.misconfigured("channels must be an array of strings")
            }
            whereValue = ["channels": ["$in": c]]
        }
        switch body["data"] {
        case .object(let o)?: data = o
        case nil, .null?: data = [:]
        default: throw Self.misconfigured("data must be a JSON object")
        }
        if body["expiration_time"].map({ !$0.isNull }) == true, body["expiration_interval"].map({ !$0.isNull }) == true {
            throw Self.misconfigured("Both expiration_time and expiration_interval cannot be set")
        }
        pushTime = now
        scheduled = false
        localTime = nil
        pushTimeText = now.iso
        if let given = body["push_time"], !given.isNull {
            guard let time = Self.time(given) else { throw Self.misconfigured("push_time is not valid time.") }
            scheduled = true
            pushTimeText = given.stringValue ?? time.date.iso
            if time.local {
                localTime = time.date.milliseconds
                // The earliest zone (UTC+14) reaches that wall-clock time first.
                pushTime = ParseDate(milliseconds: time.date.milliseconds - 14 * 3_600_000)
            } else {
                pushTime = time.date
            }
        }
        if let given = body["expiration_time"], !given.isNull {
            guard let time = Self.time(given), !time.local else { throw Self.misconfigured("expiration_time is not valid time.") }
            expirationTime = time.date
        }
        if let given = body["expiration_interval"], !given.isNull {
            guard let seconds = given.numberValue, seconds > 0, seconds.rounded() == seconds else {
                throw Self.misconfigured("expiration_interval must be a number greater than 0")
            }
            expirationInterval = Int64(seconds)
        }
    }

    /// When this push expires for a device that gets it at `sendTime`.
    public func expiration(sendingAt sendTime: ParseDate) -> ParseDate? {
        if let expirationTime { return expirationTime }
        if let expirationInterval { return ParseDate(milliseconds: max(sendTime.milliseconds, pushTime.milliseconds) + expirationInterval * 1000) }
        return nil
    }

    /// A time as Parse Server reads it: seconds since 1970, or an ISO 8601 date with or without a zone.
    static func time(_ value: JSONValue) -> (date: ParseDate, local: Bool)? {
        if let seconds = value.numberValue, seconds.isFinite, abs(seconds) < 1e13 { return (ParseDate(milliseconds: Int64(seconds * 1000)), false) }
        if case .object(let o) = value, o["__type"] == "Date", let iso = o["iso"]?.stringValue { return time(.string(iso)) }
        guard let text = value.stringValue?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        let zoned = text.hasSuffix("Z") || text.range(of: #"[+-]\d\d:?\d\d$"#, options: .regularExpression) != nil
        if zoned, let date = ParseDate(iso: text) { return (date, false) }
        // A date and time without a zone is a local time (its wall-clock value, read as UTC).
        if !zoned, text.contains("T"), let date = ParseDate(iso: text + "Z") { return (date, true) }
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        for options: ISO8601DateFormatter.Options in [
            [.withInternetDateTime, .withFractionalSeconds], [.withInternetDateTime],
            [.withFullDate, .withTime, .withColonSeparatorInTime, .withDashSeparatorInDate],
            [.withFullDate],
        ] {
            formatter.formatOptions = options
            var candidate = text
            // A local time is read as if it were UTC: its wall-clock value.
            if !zoned, options.contains(.withInternetDateTime) { candidate += "Z" }
            if let date = formatter.date(from: candidate) {
                return (ParseDate(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded())), !zoned)
            }
        }
        return nil
    }
}
