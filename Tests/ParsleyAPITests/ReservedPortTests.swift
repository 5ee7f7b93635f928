#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Testing

/// What the tests' port reservations rely on from the kernel: a held port refuses connections, is never handed to a
/// socket binding port 0, and a server binding with `SO_REUSEADDR` (as moto, PostgreSQL and Hummingbird do) can
/// listen on it while it is held.
@Suite("Test support: a reserved port")
struct ReservedPortTests {
    @Test("held: connections refused, never given to a bind of port 0; a server with SO_REUSEADDR listens on it")
    func heldPort() throws {
        let reserved = try ReservedPort()
        defer { reserved.release() }
        #expect(Self.connect(reserved.port) == ECONNREFUSED)
        // Held: a socket without SO_REUSEADDR cannot bind it.
        let plain = LoopbackSocket.socket()
        defer { close(plain) }
        #expect(LoopbackSocket.bind(plain, port: reserved.port) == -1)
        // Servers that bind port 0 (with SO_REUSEADDR, as Hummingbird's do, or without) are given other ports.
        for n in 0..<2_000 {
            let fd = LoopbackSocket.socket(reuseAddress: n % 2 == 0)
            defer { close(fd) }
            #expect(LoopbackSocket.bind(fd, port: 0) != reserved.port)
        }
        let server = LoopbackSocket.socket(reuseAddress: true)
        defer { close(server) }
        #expect(LoopbackSocket.bind(server, port: reserved.port) == reserved.port)
        #expect(listen(server, 4) == 0)
        #expect(Self.connect(reserved.port) == 0)
    }

    /// 0 when a connection to 127.0.0.1:`port` is accepted, else the error number.
    static func connect(_ port: Int) -> Int32 {
        let fd = LoopbackSocket.socket()
        defer { close(fd) }
        return LoopbackSocket.connect(fd, port: port)
    }
}
