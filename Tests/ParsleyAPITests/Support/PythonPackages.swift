/// Python packages that the tests' local doubles (moto, aiosmtpd) and clients (gql) need, installed from PyPI when
/// python3 lacks them, so that `swift test` on a fresh machine needs no step by hand.
///
/// One pip at a time: pip processes installing into the same site-packages at once can break each other's install
/// (a fresh machine's first run lost gql's websockets transport that way, while three other installs ran).
enum PythonPackages {
    private static let oneAtATime = AsyncSemaphore(1)

    /// Whether `python3 -c 'import <modules>'` works, after `pip install <requirement>` (tried twice) when it did not.
    static func ensure(imports modules: String, requirement: String) async -> Bool {
        let check = ["/usr/bin/env", "python3", "-c", "import \(modules)"]
        if await spawned(check) == 0 { return true }
        await oneAtATime.wait()
        var ready = false
        for _ in 0..<2 where !ready {
            _ = await spawned(["/usr/bin/env", "python3", "-m", "pip", "install", "--quiet", requirement])
            ready = await spawned(check) == 0
        }
        await oneAtATime.signal()
        return ready
    }
}
