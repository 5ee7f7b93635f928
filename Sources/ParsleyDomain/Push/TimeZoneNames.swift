import Foundation

/// Foundation's time zones by IANA name (kept apart so the push code reads without Foundation).
enum TimeZoneNames {
    static let all: [String] = TimeZone.knownTimeZoneIdentifiers
    /// The zone's offset from UTC now, in seconds.
    static func offset(_ name: String) -> Int? { TimeZone(identifier: name)?.secondsFromGMT() }
}
