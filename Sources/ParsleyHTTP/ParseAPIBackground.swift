import Logging
import ParsleyDomain
import ParsleyStorage
import ServiceLifecycle

/// The API's background work, run as a service of the server's ServiceGroup (so it starts with the server and
/// stops with it): queued mails, and on a database shared by several processes, the cache listener that drops
/// schemas, roles and sessions another process changed.
public struct ParseAPIBackground: Service {
    let api: ParseAPI

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await api.users.emails.sendQueuedMails() }
                if let broadcaster = api.store.database as? any ChangeBroadcasting {
                    group.addTask { await listen(broadcaster.changes()) }
                }
                await group.waitForAll()
            }
        }
    }

    func listen(_ changes: AsyncStream<String>) async {
        let (schemas, roles, sessions, logger) = (api.schemas, api.roles, api.sessions, Logger(label: "parsley.cache"))
        for await topic in changes {
            if topic == "*" || topic.hasPrefix("schema:") {
                do { try await schemas.reload() } catch { logger.warning("schema reload failed: \(error)") }
            }
            if topic == "*" || topic == "roles" { roles.forgetCached() }
            if topic == "*" || topic == "sessions" { sessions.forgetCached() }
            if topic.hasPrefix("session:") { sessions.invalidate(token: String(topic.dropFirst("session:".count))) }
        }
    }
}

extension ParseAPI {
    /// The service to run beside the HTTP server (`ParsleyServer.application` adds it).
    public var background: ParseAPIBackground { ParseAPIBackground(api: self) }
}
