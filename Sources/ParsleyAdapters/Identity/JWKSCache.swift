import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import ParsleyCore

/// An identity provider's signing keys, fetched from its JWKS URL and kept as long as its `Cache-Control: max-age`
/// allows (an hour without one, a day at most). A `kid` the cached set lacks (the provider rotated its keys) fetches
/// the set again, once: further unknown `kid`s within `unknownKidInterval` are refused without a fetch, so forged
/// tokens cannot make Parsley hammer the provider. Concurrent log-ins share one fetch, and a fetch that takes longer
/// than `timeout` fails.
actor JWKSCache {
    let url: String
    let timeout: Duration
    let unknownKidInterval: Duration
    static let defaultMaxAge = 3600
    static let longestMaxAge = 86_400

    private var current: (keys: JWKSKeySet, expires: ContinuousClock.Instant)?
    /// Callers waiting for the fetch under way; nil when none is.
    private var waiters: [CheckedContinuation<JWKSKeySet, any Error>]?
    private var lastUnknownKidFetch: ContinuousClock.Instant?

    init(url: String, timeout: Duration = .seconds(5), unknownKidInterval: Duration = .seconds(30)) {
        self.url = url
        self.timeout = timeout
        self.unknownKidInterval = unknownKidInterval
    }

    /// The key `kid` names; nil when the provider does not publish it. - Throws: `JWKSError` when the keys had to be
    /// fetched and could not be.
    func key(kid: String) async throws -> JWKSKeySet.Key? {
        let now = ContinuousClock.now
        if let current, current.expires > now {
            if let key = current.keys.keys[kid] { return key }
            if let last = lastUnknownKidFetch, now - last < unknownKidInterval { return nil }
            lastUnknownKidFetch = now
        }
        return try await refresh().keys[kid]
    }

    /// Fetches the set, or waits for the fetch already under way (made by the caller that found none: no task of its
    /// own outlives the requests).
    private func refresh() async throws -> JWKSKeySet {
        if waiters != nil {
            return try await withCheckedThrowingContinuation { waiters?.append($0) }
        }
        waiters = []
        let result: Result<(JWKSKeySet, Int), any Error>
        do {
            result = .success(try await Self.fetch(url, timeout: timeout))
        } catch {
            result = .failure(error)
        }
        let waiting = waiters ?? []
        waiters = nil
        if case .success(let (keys, maxAge)) = result { current = (keys, .now + .seconds(maxAge)) }
        for waiter in waiting { waiter.resume(with: result.map(\.0)) }
        return try result.get().0
    }

    /// One GET of the JWKS: the usable keys and how many seconds they may be kept.
    static func fetch(_ url: String, timeout: Duration) async throws -> (JWKSKeySet, Int) {
        try await withThrowingTaskGroup(of: (JWKSKeySet, Int)?.self) { group in
            group.addTask {
                var request = HTTPClientRequest(url: url)
                request.headers.add(name: "Accept", value: "application/json")
                request.headers.add(name: "User-Agent", value: "parsley")
                let response: HTTPClientResponse
                let body: ByteBuffer
                do {
                    response = try await HTTPClient.shared.execute(request, timeout: .seconds(Int64(timeout.components.seconds) + 1))
                    body = try await response.body.collect(upTo: 1 << 20)
                } catch {
                    throw JWKSError.unreachable("\(error)")
                }
                guard response.status == .ok else { throw JWKSError.unreachable("HTTP \(response.status.code)") }
                guard let document = try? JSONParser.parse(body.readableBytesView) else { throw JWKSError.malformed }
                let keys = try await JWKSKeySet.parse(document)
                return (keys, maxAge(response.headers["cache-control"]))
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let result = first else {
                throw JWKSError.unreachable("no answer within \(timeout)")
            }
            return result
        }
    }

    /// Seconds from `Cache-Control` values: `max-age=N` (at most a day), 0 for `no-store`/`no-cache`, an hour without.
    static func maxAge(_ values: [String]) -> Int {
        var seconds: Int?
        for directive in values.flatMap({ $0.split(separator: ",") }) {
            let item = String(directive.filter { !$0.isWhitespace }).lowercased()
            if item == "no-store" || item == "no-cache" { return 0 }
            if item.hasPrefix("max-age="), let value = Int(item.dropFirst("max-age=".count)), value >= 0 { seconds = value }
        }
        return min(seconds ?? defaultMaxAge, longestMaxAge)
    }
}
