import ParsleyCore
import Synchronization

/// Where a connection's frames go: the socket's transport, which keeps them in order in a bounded queue.
public protocol LiveOutlet: Sendable {
    /// Queues a frame for the socket; `.overflow` when the client is `queueLimit` frames behind (the transport then
    /// closes the socket at once), `.closed` once it is gone.
    func push(_ text: String) -> LiveOutletResult
    /// The hub lets the client go: the socket closes once what is queued is written.
    func finish()
}

public enum LiveOutletResult: Sendable {
    case queued, overflow, closed
}

/// One LiveQuery client: who it connected as, and its socket's outlet. A client that lets its queue fill is
/// disconnected (`onOverflow`), so one slow reader never holds back the others.
public final class LiveConnection: Sendable {
    /// Who a connection speaks for after `connect`.
    struct Identity: Sendable {
        var isMaster: Bool
        var sessionToken: String?
        var userId: String?
        var installationId: String?
    }

    /// Parse Server's `clientId`: a UUID.
    public let clientId: String
    /// Frames for the socket, in order.
    private let outlet: any LiveOutlet
    private let identity = Mutex<Identity?>(nil)
    /// Called once when the client fell too far behind (the transport closes the socket).
    private let overflow = Mutex<(@Sendable () -> Void)?>(nil)
    let address: String?

    init(outlet: any LiveOutlet, address: String?) {
        clientId = Self.uuid()
        self.outlet = outlet
        self.address = address
    }

    /// Also runs `close` when the client falls too far behind.
    public func onOverflow(_ close: @escaping @Sendable () -> Void) {
        overflow.withLock { previous in
            let before = previous
            previous = {
                before?()
                close()
            }
        }
    }

    var connected: Identity? {
        get { identity.withLock { $0 } }
        set { identity.withLock { $0 = newValue } }
    }

    /// Queues a frame; false when the client is too far behind (it is then disconnected).
    @discardableResult
    func send(_ frame: JSONValue) -> Bool { send(text: JSONWriter.string(frame)) }

    /// Queues an event frame around the object's JSON text (shared by the subscribers who see the same object).
    func send(eventText op: String, requestId: Int, object: String, original: String?) -> Bool {
        let installation = connected?.installationId.map { #","installationId":"# + JSONWriter.string(.string($0)) }
        var text = ""
        // One allocation for the whole frame (events go out by the thousand).
        text.reserveCapacity(
            80 + op.utf8.count + clientId.utf8.count + (installation?.utf8.count ?? 0) + object.utf8.count + (original?.utf8.count ?? 0))
        text += #"{"op":""#
        text += op
        text += #"","clientId":""#
        text += clientId
        text += #"","requestId":"#
        text += String(requestId)
        if let installation { text += installation }
        text += #","object":"#
        text += object
        if let original {
            text += #","original":"#
            text += original
        }
        text += "}"
        return send(text: text)
    }

    private func send(text: String) -> Bool {
        switch outlet.push(text) {
        case .queued: return true
        case .overflow:
            overflow.withLock { c in
                c?()
                c = nil
            }
            return false
        case .closed: return false
        }
    }

    /// Sends an `error` frame (Parse Server's shape: no `clientId`).
    func send(_ error: LiveQueryError, requestId: Int?) {
        send([
            "op": "error", "code": .int(Int64(error.code)), "error": .string(error.message), "reconnect": .bool(error.reconnect),
            "requestId": requestId.map { .int(Int64($0)) } ?? .null,
        ])
    }

    /// A frame with `op`, `clientId` and the `installationId` the client connected with.
    func frame(_ op: String, requestId: Int? = nil) -> [String: JSONValue] {
        var f: [String: JSONValue] = ["op": .string(op), "clientId": .string(clientId)]
        if let requestId { f["requestId"] = .int(Int64(requestId)) }
        if let installationId = connected?.installationId { f["installationId"] = .string(installationId) }
        return f
    }

    /// Lets the client go (the socket closes once what is queued is written).
    public func finish() { outlet.finish() }

    static func uuid() -> String {
        var rng = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = bytes.map { b in String(b, radix: 16).count == 1 ? "0" + String(b, radix: 16) : String(b, radix: 16) }
        return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }.joined(separator: "-")
    }
}
