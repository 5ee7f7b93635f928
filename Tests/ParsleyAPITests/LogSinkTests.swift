import Foundation
import Logging
import ParsleyCore
@testable import ParsleyHTTP
import Testing

/// The log path every request takes: the buffered sink (never blocks a request, drops and counts when the output
/// cannot keep up, keeps lines whole and in order), the access line in each format, and the time stamp written
/// without Foundation.
@Suite("Log sink and access lines")
struct LogSinkTests {
    @Test("a reader that stops reading costs lines, never time; what is written is whole lines in order; the drop count is a metric")
    func stalledOutput() async throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let sink = LogSink(descriptor: fds[1], capacity: 64 << 10)
        let started = ContinuousClock.now
        var accepted = 0
        for i in 0..<20_000 {
            if sink.append(
                bytes: Array("line \(String(i).padding(toLength: 8, withPad: " ", startingAt: 0)) \(String(repeating: "x", count: 80))\n".utf8))
            {
                accepted += 1
            }
        }
        // 2 MB into a 64 KB pipe nobody reads and a 64 KB buffer: appends return at once and drop the rest. (A blocking
        // append would never return, as nobody reads; the bound leaves room for a debug build on two loaded cores,
        // where 20,000 appends took 1.3 s.)
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(sink.dropped > 0)
        #expect(accepted + sink.dropped == 20_000)
        // Now read: every accepted line arrives, whole and in order.
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        let deadline = ContinuousClock.now + .seconds(10)
        while received.count(where: { $0 == 10 }) < accepted, ContinuousClock.now < deadline {
            var poller = pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 100) > 0 {
                let n = read(fds[0], &buffer, buffer.count)
                if n > 0 { received += buffer[0..<n] }
            }
        }
        let lines = String(decoding: received, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == accepted)
        let numbers = lines.compactMap { $0.split(separator: " ").dropFirst().first.flatMap { Int($0) } }
        #expect(numbers.count == lines.count, "every line whole")
        #expect(numbers == numbers.sorted(), "in order")
        #expect(lines.allSatisfy { $0.hasSuffix(String(repeating: "x", count: 80)) })
        #expect(ParsleyMetrics().render().contains("parsley_log_lines_dropped_total"))
    }

    @Test("flush writes what is buffered at once (as at exit)")
    func flush() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let sink = LogSink(descriptor: fds[1])
        for i in 0..<100 { sink.append(bytes: Array("n=\(i)\n".utf8)) }
        sink.flush()
        var flags = fcntl(fds[0], F_GETFL)
        flags |= O_NONBLOCK
        _ = fcntl(fds[0], F_SETFL, flags)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<50 {
            let n = read(fds[0], &buffer, buffer.count)
            if n > 0 { received += buffer[0..<n] } else if received.count(where: { $0 == 10 }) == 100 { break } else { usleep(10_000) }
        }
        #expect(String(decoding: received, as: UTF8.self) == (0..<100).map { "n=\($0)\n" }.joined())
    }

    @Test("access line in text, logfmt and JSON: sorted keys, quoting, two-decimal milliseconds")
    func accessLine() throws {
        let record = AccessRecord(
            method: "GET", path: "/parse/classes/A b", status: 200, duration: .microseconds(12_345), requestId: #"id"x"#, ip: .v4(0x7F00_0001))
        func line(_ format: ParsleyLogHandler.Format) -> String {
            var out: [UInt8] = []
            var cache: (second: Int, text: [UInt8]) = (-1, [])
            record.appendLine(format: format, label: "parsley", time: 1_795_677_371_042, to: &out, cache: &cache)
            return String(decoding: out, as: UTF8.self)
        }
        #expect(
            line(.text)
                == #"2026-11-26T07:16:11.042Z info parsley: request duration_ms=12.34 ip=127.0.0.1 method=GET path="/parse/classes/A b" "#
                + #"request_id="id\"x" status=200"#
                + "\n")
        #expect(
            line(.logfmt)
                == #"time=2026-11-26T07:16:11.042Z level=info logger=parsley msg=request duration_ms=12.34 ip=127.0.0.1 method=GET "#
                + #"path="/parse/classes/A b" request_id="id\"x" status=200"#
                + "\n")
        let json = try JSONParser.parse(line(.json))
        #expect(
            json == [
                "time": "2026-11-26T07:16:11.042Z", "level": "info", "logger": "parsley", "msg": "request", "duration_ms": 12.34, "ip": "127.0.0.1",
                "method": "GET", "path": "/parse/classes/A b", "request_id": #"id"x"#, "status": 200,
            ])
    }

    @Test("time stamps match Foundation's ISO 8601 over four centuries, leap days and the epoch's edges")
    func timeStamps() {
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        var rng = SystemRandomNumberGenerator()
        var instants: [Int64] = [0, -1, 999, 1000, 951_782_400_000, 4_107_542_399_999, -2_208_988_800_000]
        for _ in 0..<5_000 { instants.append(Int64.random(in: -2_208_988_800_000...7_258_118_400_000, using: &rng)) }
        var cache: (second: Int, text: [UInt8]) = (-1, [])
        for ms in instants {
            var out: [UInt8] = []
            LogText.appendTime(ms, to: &out, cache: &cache)
            // Foundation's own milliseconds go through a Double (…998 for …999): compare the second with it, the
            // milliseconds with the integer.
            let second = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
            let expected =
                Date(timeIntervalSince1970: Double(second)).formatted(style).dropLast(5)
                + "." + String(1000 + ms - second * 1000).dropFirst() + "Z"
            #expect(String(decoding: out, as: UTF8.self) == expected, "\(ms)")
        }
    }
}
