import ParsleyStorage
import ServiceLifecycle

/// The database as a service of the server's ServiceGroup. It is the group's first service, so on SIGTERM it
/// stops last: the HTTP server finishes its requests first, then the database's work ends (queued SQLite writes
/// commit) and the database is closed.
struct DatabaseService: Service {
    let database: any SQLDatabase

    func run() async throws {
        await cancelWhenGracefulShutdown { await database.run() }
        try await database.close()
    }
}
