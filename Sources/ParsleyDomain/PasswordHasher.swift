import HummingbirdBcrypt
import NIOCore
import NIOPosix

/// bcrypt hashing off the cooperative threads (it takes tens of milliseconds by design), on threads of its own: a
/// burst of log-ins (every failed one costs a bcrypt too, so that unknown users take as long as known ones) queues
/// there, not in front of the file reads and writes that run on NIO's shared pool.
public struct PasswordHasher: Sendable {
    /// As many threads as cores: bcrypt is pure computation.
    static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: max(1, System.coreCount))
        pool.start()
        return pool
    }()

    public let cost: UInt8

    public init(cost: UInt8) { self.cost = cost }

    public func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await Self.pool.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    public func verify(_ password: String, hash: String) async throws -> Bool {
        try await Self.pool.runIfActive { Bcrypt.verify(password, hash: hash) }
    }

    /// Takes as long as `verify` against a real hash of this cost, and matches nothing: for a log-in whose user does not
    /// exist or has no password, so that its answer comes as late as a wrong password's and does not tell which accounts
    /// exist (Parse Server does the same since GHSA-mmpq-5hcv-hf2v).
    public func verifyAgainstNothing(_ password: String) async throws {
        _ = try await verify(password, hash: dummyHash)
    }

    /// A well-formed bcrypt hash of this cost (`$2b$10$` + 22 characters of salt + 31 of hash) that no password matches
    /// in practice: its salt and digest are fixed characters, not the hash of anything we know.
    var dummyHash: String {
        let cost = self.cost < 10 ? "0\(self.cost)" : "\(self.cost)"
        return "$2b$\(cost)$" + "Parsley.dummy.salt.xxO" + "nobody.has.this.password.hash.."
    }
}
