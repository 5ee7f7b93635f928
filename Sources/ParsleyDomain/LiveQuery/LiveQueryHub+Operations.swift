import Synchronization
import Logging
import ParsleyCore

extension LiveQueryHub {
    /// Classes whose writes have routes of their own on REST (sign-up, sessions): a socket reads them, never writes.
    static let socketReadOnlyClasses: Set<String> = ["_User", "_Session"]

    /// A `find`, `get`, `save` or `delete` sent over the socket (Parsley's extension, parse-server issue 9086),
    /// answered with `{"op":"result","requestId":...}` (`results` and `count`, `object`, or nothing) through the
    /// query and object services REST uses, as the connection's user (or the message's own `sessionToken`): the same
    /// CLPs, ACLs, protected fields, triggers, keyword denylist and error codes, as an `error` frame that asks for no
    /// reconnect.
    func operate(_ m: LiveQueryMessage.Operation, _ c: LiveConnection) async {
        guard let identity = c.connected else {
            return c.send(.notConnected("sending \(m.kind.rawValue)"), requestId: m.requestId)
        }
        do {
            if let gate = operationGate.withLock({ $0 }) {
                let (method, path) = Self.restRoute(m)
                try await gate(method, path, c.address, identity.isMaster && m.sessionToken == nil, m.sessionToken ?? identity.sessionToken)
            }
            let auth = try await operationAuth(m, identity)
            var frame = c.frame("result", requestId: m.requestId)
            switch m.kind {
            case .find:
                let page = try await queries.find(m.className, try FindOptions(params: m.params), auth: auth, triggers: true)
                frame["results"] = .array(page.results.map(JSONValue.object))
                if let count = page.count { frame["count"] = .int(Int64(count)) }
            case .get:
                let object = try await queries.get(
                    m.className, objectId: m.objectId ?? "", try FindOptions(params: m.params, isGet: true), auth: auth, triggers: true)
                frame["object"] = .object(object)
            case .save:
                try Self.refuseSocketWrite(m.className)
                if let id = m.objectId {
                    frame["object"] = .object(try await objects.update(m.className, objectId: id, try UpdateObject(decoding: m.object), auth: auth))
                } else {
                    frame["object"] = .object(try await objects.create(m.className, try CreateObject(decoding: m.object), auth: auth))
                }
            case .delete:
                try Self.refuseSocketWrite(m.className)
                try await objects.delete(m.className, objectId: m.objectId ?? "", auth: auth)
            }
            c.send(.object(frame))
        } catch {
            c.send(refusal(error), requestId: m.requestId)
        }
    }

    /// The caller of an operation: the message's own session, else the connection's, else the master key or nobody
    /// it connected with; a session that ended since is 209.
    func operationAuth(_ m: LiveQueryMessage.Operation, _ identity: LiveConnection.Identity) async throws -> Auth {
        if identity.isMaster, m.sessionToken == nil {
            return Auth(isMaster: true, installationId: identity.installationId)
        }
        guard let token = m.sessionToken ?? identity.sessionToken else {
            return Auth(isMaster: false, installationId: identity.installationId)
        }
        let userId = try await sessions.resolve(token).userId
        let roleNames = try await roles.roleNames(forUser: userId)
        return Auth(isMaster: false, userId: userId, roles: roleNames, installationId: identity.installationId, sessionToken: token)
    }

    /// The REST request an operation stands for, as `rateLimit` rules see it: `find` is `GET /classes/Score`, `get`
    /// `GET /classes/Score/<id>`, `save` `POST /classes/Score` or `PUT /classes/Score/<id>`, `delete`
    /// `DELETE /classes/Score/<id>` (system classes under their own routes: `/users`, `/roles`, `/installations`, `/sessions`).
    static func restRoute(_ m: LiveQueryMessage.Operation) -> (method: String, path: [String]) {
        let base: [String]
        switch m.className {
        case "_User": base = ["users"]
        case "_Role": base = ["roles"]
        case "_Installation": base = ["installations"]
        case "_Session": base = ["sessions"]
        default: base = ["classes", m.className]
        }
        let withId = base + [m.objectId ?? ""]
        switch m.kind {
        case .find: return ("GET", base)
        case .get: return ("GET", withId)
        case .save: return m.objectId == nil ? ("POST", base) : ("PUT", withId)
        case .delete: return ("DELETE", withId)
        }
    }

    static func refuseSocketWrite(_ className: String) throws(ParseError) {
        if socketReadOnlyClasses.contains(className) {
            throw ParseError(.operationForbidden, "\(className) objects are written through the REST API, not over the LiveQuery socket")
        }
    }
}
