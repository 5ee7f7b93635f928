import ParsleyDomain
public import ServiceLifecycle

/// The API's background work, run as a service of the server's ServiceGroup (so it starts with the server and
/// stops with it): queued mails, cloud code's after-triggers, jobs and job schedules, LiveQuery's events, and on a database shared by several processes, the cache listener that drops
/// schemas, roles and sessions another process changed.
public struct ParseAPIBackground: Service {
    let api: ParseAPI

    public func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            // Pushes stop at a page's end on a graceful shutdown (the page is recorded, a restart resumes after it).
            group.addTask { await api.services.push.run(stop: { Task.isShuttingDownGracefully }) }
            group.addTask { await runCancellable() }
            await group.waitForAll()
        }
    }

    private func runCancellable() async {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await api.users.emails.sendQueuedMails() }
                group.addTask { await api.services.followCacheChanges() }
                group.addTask { await api.services.cloud.runAfterTriggers() }
                group.addTask { await api.services.cloud.runJobs() }
                group.addTask { await api.services.cloud.runScheduler(interval: api.options.schedulerInterval) }
                group.addTask { await api.services.liveQuery.run() }
                await group.waitForAll()
            }
        }
    }
}

extension ParseAPI {
    /// The service to run beside the HTTP server (`ParsleyApplication.application` adds it).
    public var background: ParseAPIBackground { ParseAPIBackground(api: self) }
}
