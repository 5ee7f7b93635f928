import HummingbirdBcrypt
import NIOPosix

/// bcrypt hashing off the cooperative threads (it takes tens of milliseconds by design).
public struct PasswordHasher: Sendable {
    public let cost: UInt8

    public init(cost: UInt8) { self.cost = cost }

    public func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    public func verify(_ password: String, hash: String) async throws -> Bool {
        try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: hash) }
    }
}
