import Foundation
import Hummingbird
import Logging
import ParsleyAdapters
import ParsleyDomain
import ParsleyHTTP
import ParsleySQLite
import ParsleyStorage

/// `parsley-bench --files [--files-mb 100] [--s3]`: streams one file up and down through Parsley with curl over
/// loopback, for each built-in store, next to a raw disk copy of the same file timed in the same run; and the
/// peak memory of this process (server included) during each transfer, above its idle size. With `--s3`, also
/// the S3 store against moto's server on loopback (`python3 -m moto.server`, started here; its own memory is not
/// counted: it keeps objects in memory).
enum FilesBench {
    struct Transfer {
        var seconds: Double
        var peakAboveIdleMB: Double
    }

    static func run(work: URL, logger: Logger, port: Int) async throws {
        let args = CommandLine.arguments
        let megabytes = args.firstIndex(of: "--files-mb").flatMap { $0 + 1 < args.count ? Int(args[$0 + 1]) : nil } ?? 100
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/curl") else {
            print("curl is required (apt-get install curl).")
            return
        }
        let source = work.appendingPathComponent("source.bin")
        try writeSource(source, megabytes: megabytes)
        let bytes = Double(megabytes << 20)
        print("Parsley files benchmark: \(megabytes) MB file, curl over loopback, \(ProcessInfo.processInfo.activeProcessorCount) cores")

        // Baseline: the same bytes copied by cp, then also synced (Parsley fsyncs every upload).
        let copy = work.appendingPathComponent("copy.bin")
        let cp = try await timed { try await shell("/bin/cp", [source.path, copy.path]) }
        let sync = try await timed { try await shell("/bin/sync", [copy.path]) }
        try? FileManager.default.removeItem(at: copy)
        let cat = try await timed { try await shell("/bin/sh", ["-c", "cat '\(source.path)' > /dev/null"]) }

        var rows: [(String, Double, Double?)] = [
            ("cp (raw disk copy)", bytes / cp / 1e6, nil),
            ("cp + fsync", bytes / (cp + sync) / 1e6, nil),
            ("cat > /dev/null (raw read)", bytes / cat / 1e6, nil),
        ]
        var backends: [(String, FilesAdapter)] = [("filesystem", .filesystem), ("database", .database)]
        var moto: Process?
        var motoEndpoint: String?
        defer { moto?.terminate() }
        if args.contains("--s3") {
            let motoPort = port + 20
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", "-m", "moto.server", "-H", "127.0.0.1", "-p", String(motoPort)]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            moto = process
            try await Task.sleep(for: .seconds(3))
            var s3 = S3FileOptions(bucket: "parsley-bench", credentials: S3Credentials(accessKeyId: "bench", secretAccessKey: "bench-secret"))
            s3.endpoint = "http://127.0.0.1:\(motoPort)"
            motoEndpoint = s3.endpoint
            backends.append(("s3 (moto)", .custom(S3FileStore(options: s3))))
        }
        for (i, backend) in backends.enumerated() {
            var options = ParseServerOptions(applicationId: "bench", masterKey: "bench-master-key", maxRequestBytes: Int(bytes) + (1 << 20))
            options.files.adapter = backend.1
            options.files.directory = work.appendingPathComponent("files-\(i)").path
            let database = try await SQLiteDatabase.open(path: work.appendingPathComponent("files-\(i).sqlite").path, logger: logger)
            let serverPort = port + 10 + i
            try await database.serving {
                let api = ParseAPI(services: try await ParseServices.open(options: options, database: database, adapters: .standard))
                let app = ParsleyApplication.application(api: api, host: "127.0.0.1", port: serverPort, logger: logger)
                try await withBackground({ try await app.runService() }) {
                    try await Task.sleep(for: .milliseconds(500))
                    let base = "http://127.0.0.1:\(serverPort)/parse"
                    let answer = work.appendingPathComponent("answer.json")

                    let upload = try await measure {
                        try await shell(
                            "/usr/bin/curl",
                            [
                                "-sS", "--fail", "-o", answer.path, "-X", "POST", "-H", "X-Parse-Application-Id: bench", "-H",
                                "X-Parse-Master-Key: bench-master-key",
                                "-H", "Content-Type: application/octet-stream", "-H", "Expect:", "-T", source.path, "\(base)/files/source.bin",
                            ])
                    }
                    let reply = try String(contentsOf: answer, encoding: .utf8)
                    guard let range = reply.range(of: "\"name\":\""), let end = reply[range.upperBound...].firstIndex(of: "\"") else {
                        throw BenchFailure("upload answered \(reply)")
                    }
                    let name = String(reply[range.upperBound..<end])
                    let downloaded = work.appendingPathComponent("downloaded.bin")
                    let download = try await measure {
                        try await shell("/usr/bin/curl", ["-sS", "--fail", "-o", downloaded.path, "\(base)/files/bench/\(name)"])
                    }
                    try await shell("/usr/bin/cmp", [source.path, downloaded.path])
                    try? FileManager.default.removeItem(at: downloaded)
                    rows.append(("upload, \(backend.0) store", bytes / upload.seconds / 1e6, upload.peakAboveIdleMB))
                    rows.append(("download, \(backend.0) store", bytes / download.seconds / 1e6, download.peakAboveIdleMB))
                }
            }
        }
        if let endpoint = motoEndpoint {
            // Baseline for the S3 rows: the same file straight to and from moto with curl (one PUT, one GET; moto
            // does not check signatures), so what moto itself can take is in the same run.
            let key = "\(endpoint)/parsley-bench/direct-\(UUID().uuidString).bin"
            let put = try await timed {
                try await shell(
                    "/usr/bin/curl", ["-sS", "--fail", "-o", "/dev/null", "-H", "Expect:", "-H", "x-amz-acl: public-read", "-T", source.path, key])
            }
            let downloaded = work.appendingPathComponent("direct.bin")
            let get = try await timed { try await shell("/usr/bin/curl", ["-sS", "--fail", "-o", downloaded.path, key]) }
            try await shell("/usr/bin/cmp", [source.path, downloaded.path])
            try? FileManager.default.removeItem(at: downloaded)
            rows.append(("baseline: curl PUT straight to moto", bytes / put / 1e6, nil))
            rows.append(("baseline: curl GET straight from moto", bytes / get / 1e6, nil))
        }
        print("")
        print("| transfer of \(megabytes) MB | MB/s | peak memory above idle (MB) |")
        print("|---|---:|---:|")
        for (name, rate, peak) in rows {
            print("| \(name) | \(String(format: "%.0f", rate)) | \(peak.map { String(format: "%.1f", $0) } ?? "") |")
        }
        print("")
        print("idle memory (VmRSS) before the transfers: \(Memory.kilobytes("VmRSS") / 1024) MB; downloads compared byte for byte with cmp")
    }

    /// Times `body` and the rise of this process's peak resident memory over its size when it started.
    static func measure(_ body: () async throws -> Void) async throws -> Transfer {
        try await Task.sleep(for: .milliseconds(200))
        let idle = Memory.kilobytes("VmRSS")
        Memory.resetPeak()
        let seconds = try await timed(body)
        let peak = Memory.kilobytes("VmHWM")
        return Transfer(seconds: seconds, peakAboveIdleMB: Double(max(0, peak - idle)) / 1024)
    }

    static func timed(_ body: () async throws -> Void) async throws -> Double {
        let start = ContinuousClock.now
        try await body()
        let d = ContinuousClock.now - start
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    /// Pseudo-random bytes written 1 MB at a time (never the whole file in memory).
    static func writeSource(_ url: URL, megabytes: Int) throws {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        for _ in 0..<megabytes {
            chunk.withUnsafeMutableBytes { raw in
                let words = raw.bindMemory(to: UInt64.self)
                for i in words.indices {
                    state ^= state << 13
                    state ^= state >> 7
                    state ^= state << 17
                    words[i] = state
                }
            }
            try handle.write(contentsOf: chunk)
        }
    }

    /// Runs a command to its end without blocking a thread of the server's pool.
    static func shell(_ path: String, _ arguments: [String]) async throws {
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = arguments
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        guard status == 0 else { throw BenchFailure("\(path) \(arguments.joined(separator: " ")) exited \(status)") }
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// This process's memory from /proc/self/status, and the reset of its peak (`clear_refs` 5, Linux ≥ 4.0).
enum Memory {
    static func kilobytes(_ field: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            return line.split(separator: " ").compactMap { Int($0) }.first ?? 0
        }
        return 0
    }

    static func resetPeak() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }
}
