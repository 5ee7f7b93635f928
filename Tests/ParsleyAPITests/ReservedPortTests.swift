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
        let plain = Self.socket()
        defer { close(plain) }
        #expect(Self.bind(plain, port: reserved.port) == -1)
        // Servers that bind port 0 (with SO_REUSEADDR, as Hummingbird's do, or without) are given other ports.
        for n in 0..<2_000 {
            let fd = Self.socket(reuseAddress: n % 2 == 0)
            defer { close(fd) }
            #expect(Self.bind(fd, port: 0) != reserved.port)
        }
        let server = Self.socket(reuseAddress: true)
        defer { close(server) }
        #expect(Self.bind(server, port: reserved.port) == reserved.port)
        #expect(listen(server, 4) == 0)
        #expect(Self.connect(reserved.port) == 0)
    }

    static func socket(reuseAddress: Bool = false) -> Int32 {
        #if canImport(Glibc)
            let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var one: Int32 = 1
        if reuseAddress { _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size)) }
        return fd
    }

    static func address(_ port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// The port bound, or -1.
    static func bind(_ fd: Int32, port: Int) -> Int {
        var address = address(port)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                #if canImport(Glibc)
                    Glibc.bind(fd, sa, length) == 0 && getsockname(fd, sa, &length) == 0
                #else
                    Darwin.bind(fd, sa, length) == 0 && getsockname(fd, sa, &length) == 0
                #endif
            }
        }
        return ok ? Int(UInt16(bigEndian: address.sin_port)) : -1
    }

    /// 0 when a connection to 127.0.0.1:`port` is accepted, else the error number.
    static func connect(_ port: Int) -> Int32 {
        let fd = socket()
        defer { close(fd) }
        var address = address(port)
        let result = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                #if canImport(Glibc)
                    Glibc.connect(fd, sa, socklen_t(MemoryLayout<sockaddr_in>.size))
                #else
                    Darwin.connect(fd, sa, socklen_t(MemoryLayout<sockaddr_in>.size))
                #endif
            }
        }
        return result == 0 ? 0 : errno
    }
}
