public import ParsleyCore

/// `POST /push` (master key) and cloud code's `Parse.Push.send`: the push as `PushRequest` reads it (every refusal
/// is 115), decoded once. A body that is not an object is read as an empty one (Parse Server's answer: neither
/// `channels` nor `where`).
public struct SendPush: Sendable, Equatable {
    public var push: PushRequest

    public init(_ push: PushRequest) { self.push = push }

    public init(decoding body: JSONValue?, now: ParseDate = .now) throws(ParseError) {
        push = try PushRequest(body: body?.objectValue ?? [:], now: now)
    }
}
