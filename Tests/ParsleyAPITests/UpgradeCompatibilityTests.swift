import ParsleyCloud
import Testing

/// An app written against the library's old name still builds: `import ParsleyCloud` brings ParsleyServer's API.
@Suite("Upgrade compatibility")
struct UpgradeCompatibilityTests {
    @Test("import ParsleyCloud re-exports ParsleyServer (Parsley.main, the option table)")
    func oldModuleName() {
        let main: (CloudCode) async -> Void = { cloud in await Parsley.main(cloud: cloud) }
        _ = main
        #expect(String(reflecting: Parsley.self).hasPrefix("ParsleyServer."))
    }
}
