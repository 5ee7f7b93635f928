import Testing

@testable import ParsleyDomain

/// The one cache behind sessions, role names and known files: trust counted from a read's start, forgets that stop
/// reads under way from storing, and a size limit.
@Suite("Trusted entries")
struct TrustedEntriesTests {
    @Test("a value is trusted until its read's start plus the trust; a forget stops a read under way from storing")
    func trustAndForget() {
        var cache = TrustedEntries<String>(limit: 3)
        let before = cache.generation
        cache.store("a", for: "k", started: 1_000, trust: 2_000, generation: before)
        #expect(cache.value("k", now: 2_999) == "a")
        #expect(cache.value("k", now: 3_000) == nil)
        // A read began, then the key was forgotten (a revocation): what the read found is not stored.
        let reading = cache.generation
        cache.forget(["k"])
        cache.store("stale", for: "k", started: 1_000, trust: 2_000, generation: reading)
        #expect(cache.value("k", now: 1_500) == nil)
        #expect(!cache.holds("k"))
        cache.store("b", for: "k", started: 1_000, trust: 2_000, generation: cache.generation)
        cache.replace("k", with: "c")
        #expect(cache.value("k", now: 2_999) == "c")
        #expect(cache.value("k", now: 3_000) == nil, "a replaced value keeps its trust")
        cache.replace("absent", with: "x")
        #expect(!cache.holds("absent"))
        let reading2 = cache.generation
        cache.forgetAll()
        cache.store("late", for: "other", started: 1_000, trust: 2_000, generation: reading2)
        #expect(!cache.holds("k") && !cache.holds("other"))
    }

    @Test("when full, a new key drops everything held; storing a held key again does not")
    func limit() {
        var cache = TrustedEntries<Int>(limit: 2)
        cache.store(1, for: "a", started: 0, trust: 10, generation: cache.generation)
        cache.store(2, for: "b", started: 0, trust: 10, generation: cache.generation)
        cache.store(3, for: "b", started: 0, trust: 10, generation: cache.generation)
        #expect(cache.holds("a") && cache.value("b", now: 5) == 3)
        cache.store(4, for: "c", started: 0, trust: 10, generation: cache.generation)
        #expect(!cache.holds("a") && !cache.holds("b"))
        #expect(cache.value("c", now: 5) == 4)
    }
}
