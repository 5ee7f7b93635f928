import ParsleyCore
import Testing

@Suite("Regex safety (LiveQuery's in-memory $regex)")
struct RegexSafetyTests {
    @Test("nested quantifiers, quantified alternations and back-references are refused; ordinary patterns pass")
    func patterns() {
        for safe in ["^abc", "a+b*c?", "(ab)+", "[a-z]+@[a-z]+\\.com", "^(?:foo|bar)$", "\\d{3}-\\d{4}", "x(a+)y", "[(+]+"] {
            #expect(RegexSafety.isSafe(safe), "\(safe)")
        }
        for unsafe in ["(a+)+$", "(a*)*", "((ab)+)+", "(a|aa)+", "(x+x+)+y", "(.*a){12}", "(a)\\1", String(repeating: "a", count: 600)] {
            #expect(!RegexSafety.isSafe(unsafe), "\(unsafe)")
        }
    }
}
