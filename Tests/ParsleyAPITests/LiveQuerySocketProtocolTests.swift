import Foundation
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import Testing

/// The WebSocket protocol under LiveQuery (RFC 6455 as the server's own channel handler speaks it): pings,
/// fragments, closes, refusals of bad frames, and the server's pings that close a client gone quiet.
@Suite("LiveQuery sockets: the WebSocket protocol")
struct LiveQuerySocketProtocolTests {
    typealias T = LiveQueryTests
    typealias W = RawWebSocket

    /// Reads up to `connected`, past the pings that came first (a loaded machine may ping before the answer to
    /// `connect`), answered when `answeringPings`: how many it passed.
    static func readConnected(_ ws: W, answeringPings: Bool) async throws -> Int {
        var pings = 0
        while true {
            let frame = try await ws.next()
            guard frame.opcode == W.ping else {
                #expect(try JSONParser.parse(frame.text)["op"] == "connected")
                return pings
            }
            pings += 1
            if answeringPings { try await ws.send(.init(opcode: W.pong, payload: frame.payload)) }
        }
    }

    static func connect(_ appId: String = TestServer.appId) -> String {
        JSONWriter.string(["op": "connect", "applicationId": .string(appId), "masterKey": .string(TestServer.masterKey)])
    }

    @Test(
        "pings are answered, fragments make one message (with a ping between them), binary is ignored, frames of every length, a close is answered with its code",
        arguments: Backend.all)
    func protocolFrames(_ backend: Backend) async throws {
        try await TestServer.withAPI(backend: backend, TestServer.liveOptions(T.live)) { api, _, p in
            let ws = try await W.open(port: try #require(p.port))
            #expect(ws.response.hasPrefix("HTTP/1.1 101"), "\(ws.response)")
            #expect(ws.response.lowercased().contains("sec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo="), "\(ws.response)")

            try await ws.send(.init(opcode: W.ping, payload: Array("hi".utf8)))
            #expect(try await ws.next() == .init(opcode: W.pong, payload: Array("hi".utf8)))

            // `connect` in three fragments, a ping between the first two.
            let connect = Array(Self.connect().utf8)
            let thirds = [connect[..<10], connect[10..<30], connect[30...]].map(Array.init)
            try await ws.send(.init(fin: false, opcode: W.text, payload: thirds[0]))
            try await ws.send(.init(opcode: W.ping, payload: [7]))
            try await ws.send(.init(fin: false, opcode: W.continuation, payload: thirds[1]))
            try await ws.send(.init(opcode: W.continuation, payload: thirds[2]))
            #expect(try await ws.next() == .init(opcode: W.pong, payload: [7]))
            let connected = try JSONParser.parse(try await ws.next().text)
            #expect(connected["op"] == "connected", "\(connected)")

            // A binary message is ignored; the next text message is answered in its turn.
            try await ws.send(.init(opcode: W.binary, payload: Array(#"{"op":"subscribe"}"#.utf8)))
            try await ws.sendText(#"{"op":"subscribe","requestId":3,"query":{"className":"Message","where":{}}}"#)
            let subscribed = try JSONParser.parse(try await ws.next().text)
            #expect(subscribed["op"] == "subscribed" && subscribed["requestId"] == 3, "\(subscribed)")
            #expect(api.services.liveQuery.subscriptionCount == 1)

            // Events whose frames need a 16-bit and a 64-bit length arrive whole, as one final text frame each; a ping
            // with the largest control payload (125 bytes) is answered with all of it.
            for size in [1_000, 70_000] {
                _ = try await p.createId("Message", ["body": .string(String(repeating: "x", count: size))])
                let event = try await ws.next()
                #expect(event.fin && event.opcode == W.text && event.payload.count > size)
                let json = try JSONParser.parse(event.text)
                #expect(json["op"] == "create" && json["object"]?["body"]?.stringValue?.count == size, "\(event.payload.count) bytes")
            }
            let largest = [UInt8](repeating: 0x61, count: 125)
            try await ws.send(.init(opcode: W.ping, payload: largest))
            #expect(try await ws.next() == .init(opcode: W.pong, payload: largest))

            // The client closes with 4000: the server answers 4000, closes, and the hub forgets the connection.
            try await ws.send(.init(opcode: W.close, payload: [0x0F, 0xA0]))
            let close = try await ws.next()
            #expect(close.opcode == W.close && close.closeCode == 4000, "\(close)")
            // (The server's side is checked: see `serverPings` on sockets a test process hands to a PostgreSQL.)
            for _ in 0..<500 where api.services.liveQuery.connectionCount > 0 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(api.services.liveQuery.connectionCount == 0)
            #expect(api.services.liveQuery.subscriptionCount == 0)
            await ws.close()

            // A client that only shuts its side (no close frame) is let go too, not left half-open.
            let quiet = try await W.open(port: try #require(p.port))
            try await quiet.sendText(Self.connect())
            #expect(try JSONParser.parse(try await quiet.next().text)["op"] == "connected")
            #expect(api.services.liveQuery.connectionCount == 1)
            try await quiet.shutOutput()
            for _ in 0..<500 where api.services.liveQuery.connectionCount > 0 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(api.services.liveQuery.connectionCount == 0)
            await quiet.close()

        }
    }

    @Test(
        "bad frames close the socket with RFC 6455's codes: invalid UTF-8 1007, too large 1009 (whole or in fragments), a stray continuation 1002",
        arguments: Backend.all)
    func refusals(_ backend: Backend) async throws {
        let options = TestServer.liveOptions(T.live) { $0.liveQuery.maxMessageBytes = 1_000 }
        try await TestServer.withAPI(backend: backend, options) { api, _, p in
            let port = try #require(p.port)
            let spaces = { (n: Int) in [UInt8](repeating: 0x20, count: n) }
            let cases: [(String, [W.Frame], Int)] = [
                ("invalid UTF-8", [.init(opcode: W.text, payload: [0x7B, 0xC3, 0x28, 0x7D])], 1007),
                ("one frame too large", [.init(opcode: W.text, payload: spaces(1_500))], 1009),
                (
                    "fragments too large",
                    [.init(fin: false, opcode: W.text, payload: spaces(600)), .init(opcode: W.continuation, payload: spaces(600))], 1009
                ),
                ("a continuation first", [.init(opcode: W.continuation, payload: Array("{}".utf8))], 1002),
                (
                    "a new message inside a fragmented one",
                    [.init(fin: false, opcode: W.text, payload: [0x7B]), .init(opcode: W.text, payload: [0x7D])], 1002
                ),
            ]
            for (name, frames, code) in cases {
                let ws = try await W.open(port: port)
                try await ws.sendText(Self.connect())
                #expect(try JSONParser.parse(try await ws.next().text)["op"] == "connected", "\(name)")
                for frame in frames { try await ws.send(frame) }
                let close = try await ws.next()
                #expect(close.opcode == W.close && close.closeCode == code, "\(name): \(close)")
                for _ in 0..<500 where api.services.liveQuery.connectionCount > 0 { try await Task.sleep(for: .milliseconds(10)) }
                #expect(api.services.liveQuery.connectionCount == 0, "\(name)")
                await ws.close()
            }
        }
    }

    @Test(
        "an upgrade the server cannot perform is answered 400 naming version 13 (version 8, no key, another protocol); one asked on a kept-alive connection is sent back 307",
        arguments: Backend.all)
    func upgradeAnswers(_ backend: Backend) async throws {
        try await TestServer.withAPI(backend: backend, TestServer.liveOptions(T.live)) { api, _, p in
            let port = try #require(p.port)
            let head = "GET /parse HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\n"
            let key = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            let refused = [
                ("version 8", head + "Upgrade: websocket\r\n" + key + "Sec-WebSocket-Version: 8\r\n\r\n"),
                ("no key", head + "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\r\n"),
                ("another protocol", head + "Upgrade: h2c\r\n\r\n"),
            ]
            for (name, request) in refused {
                let ws = try await W.open(port: port, request: request)
                #expect(ws.response.hasPrefix("HTTP/1.1 400"), "\(name): \(ws.response)")
                #expect(ws.response.lowercased().contains("sec-websocket-version: 13"), "\(name): \(ws.response)")
                // (Whether the client sees the close is not checked: see `serverPings` on inherited sockets.)
                #expect(ws.response.lowercased().contains("connection: close"), "\(name): \(ws.response)")
                await ws.close()
            }
            #expect(api.services.liveQuery.connectionCount == 0)

            // A plain request first, then an upgrade on the same connection: sent back to the same URL, closed.
            let plain = "GET /parse/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            let kept = try await W.open(port: port, request: plain + W.upgradeRequest(path: "/parse?from=kept"))
            #expect(kept.response.hasPrefix("HTTP/1.1 200"), "\(kept.response)")
            let rest = try await kept.receivedText(containing: "HTTP/1.1 307").lowercased()
            #expect(rest.contains("location: /parse?from=kept"), "\(rest)")
            #expect(rest.contains("connection: close"), "\(rest)")
            await kept.close()

            // And a fresh connection is upgraded.
            let ws = try await W.open(port: port)
            #expect(ws.response.hasPrefix("HTTP/1.1 101"), "\(ws.response)")
            await ws.close()
        }
    }

    @Test("the server pings every pingInterval: a client that answers stays, one that does not is closed", arguments: Backend.all)
    func serverPings(_ backend: Backend) async throws {
        let options = TestServer.liveOptions(T.live) { $0.liveQuery.pingInterval = .seconds(1) }
        try await TestServer.withAPI(backend: backend, options) { api, _, p in
            let port = try #require(p.port)
            let quiet = try await W.open(port: port)
            let polite = try await W.open(port: port)
            try await quiet.sendText(Self.connect())
            let quietPings = try await Self.readConnected(quiet, answeringPings: false)
            try await polite.sendText(Self.connect())
            _ = try await Self.readConnected(polite, answeringPings: true)
            // `polite` answers every ping; `quiet` reads its first ping (maybe before `connected`) and never answers.
            if quietPings == 0 {
                #expect(try await quiet.next().opcode == W.ping)
            } else {
                #expect(quietPings == 1)
            }
            var answered = 0
            // Four intervals at least, and until the hub has let `quiet` go (15 s at most, for a loaded machine; an
            // interval of a second leaves `polite` time to answer while the whole suite runs). The server's side is
            // what counts: a test process may hand its sockets to a PostgreSQL it starts meanwhile, which then keeps
            // the closed socket's other end open.
            let hub = api.services.liveQuery
            let start = ContinuousClock.now
            func going() -> Bool { hub.connectionCount > 1 || ContinuousClock.now < start + .seconds(4) }
            while ContinuousClock.now < start + .seconds(15), !polite.isClosed, going() {
                guard let ping = try? await polite.next(timeout: .milliseconds(50)) else { continue }
                #expect(ping.opcode == W.ping)
                try await polite.send(.init(opcode: W.pong, payload: ping.payload))
                answered += 1
            }
            #expect(hub.connectionCount == 1)
            #expect(!polite.isClosed)
            #expect(answered >= 3, "\(answered)")
            // `polite` is still served: it is pinged again.
            #expect(try await polite.next(timeout: .seconds(5)).opcode == W.ping)
            await polite.close()
        }
    }

    @Test("one ping timer per event loop: sockets that connect at different moments are each pinged about once per interval", arguments: Backend.all)
    func pingsForManySockets(_ backend: Backend) async throws {
        let options = TestServer.liveOptions(T.live) { $0.liveQuery.pingInterval = .seconds(1) }
        try await TestServer.withAPI(backend: backend, options) { api, _, p in
            let port = try #require(p.port)
            let hub = api.services.liveQuery
            let (quiet, finished) = (SharedFlag(), SharedFlag())
            // 24 sockets over most of a second: they fall in different slots of the loops' wheels (20 ticks of 50 ms).
            // Each has a reader from its first moment, which answers pings (the even sockets only until `quiet`) and
            // counts those that came before `quiet`.
            let (quietAt, results) = try await withThrowingTaskGroup(of: (Int, ContinuousClock.Instant, Bool, Int).self) { group in
                for i in 0..<24 {
                    let ws = try await W.open(port: port)
                    let opened = ContinuousClock.now
                    try await ws.sendText(Self.connect())
                    group.addTask {
                        var (connected, pings) = (false, 0)
                        while !finished.isSet {
                            guard let frame = try? await ws.next(timeout: .milliseconds(100)) else {
                                if ws.isClosed { break } else { continue }
                            }
                            if frame.opcode == W.text, (try? JSONParser.parse(frame.text))?["op"] == "connected" { connected = true }
                            guard frame.opcode == W.ping else { continue }
                            if quiet.isSet {
                                if i % 2 == 0 { continue }
                            } else {
                                pings += 1
                            }
                            try? await ws.send(.init(opcode: W.pong, payload: frame.payload))
                        }
                        await ws.close()
                        return (i, opened, connected, pings)
                    }
                    try await Task.sleep(for: .milliseconds(30))
                }
                // Four intervals with every socket answering: each is pinged about four times, and all stay.
                try await Task.sleep(for: .seconds(4))
                #expect(hub.connectionCount == 24)
                // Then the even ones stop answering and are let go within a few intervals; the odd ones stay.
                let quietAt = ContinuousClock.now
                quiet.set()
                let until = ContinuousClock.now + .seconds(15)
                while ContinuousClock.now < until, hub.connectionCount > 12 { try await Task.sleep(for: .milliseconds(50)) }
                #expect(hub.connectionCount == 12)
                try await Task.sleep(for: .seconds(2))
                #expect(hub.connectionCount == 12, "an answering socket was let go")
                finished.set()
                return (quietAt, try await group.reduce(into: []) { $0.append($1) })
            }
            #expect(results.count == 24)
            for (i, opened, connected, pings) in results.sorted(by: { $0.0 < $1.0 }) {
                #expect(connected, "socket \(i)")
                // Pinged from an interval after it opened, once per interval, until `quiet`: 4 s and the time the
                // sockets after it took to open (long on a loaded machine). Fewer would mean the interval stretched,
                // more a slot visited twice.
                let seconds = (quietAt - opened) / .seconds(1)
                let expected = max(1, Int(seconds) - 2)...(Int(seconds.rounded(.up)) + 1)
                #expect(expected.contains(pings), "socket \(i): \(pings) pings in \(seconds) s")
            }
        }
    }
}
