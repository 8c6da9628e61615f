import ApexKeychain
import Testing

/// `ExactName`: names compared byte for byte, parts joined with U+0000 whatever the number of parts.
@Suite("ExactName")
struct ExactNameTests {
    @Test("canonically equivalent spellings are different names; equal bytes are one")
    func bytes() {
        #expect(ExactName("caf\u{E9}") != ExactName("cafe\u{301}"))
        #expect(ExactName("caf\u{E9}") == ExactName("caf\u{E9}"))
        #expect(Set([ExactName("caf\u{E9}"), ExactName("cafe\u{301}"), ExactName("caf\u{E9}")]).count == 2)
        #expect(ExactName("a") != ExactName("a", ""))
    }

    @Test("two, three and four parts are the parts joined with U+0000")
    func arities() {
        let parts = ["svc", "caf\u{E9}", ""]
        #expect(ExactName(parts[0], parts[1]) == ExactName("svc\u{0}caf\u{E9}"))
        #expect(ExactName(parts[0], parts[1], parts[2]) == ExactName("svc\u{0}caf\u{E9}\u{0}"))
        #expect(ExactName("svc", "caf\u{E9}", "", "x") == ExactName("svc\u{0}caf\u{E9}\u{0}\u{0}x"))
        #expect(ExactName("a", "b").hashValue == ExactName("a\u{0}b").hashValue)
    }

    @Test("ExactText compares the UTF-8 bytes: equivalent spellings differ, empty and long texts compare right")
    func exactText() {
        #expect(!ExactText.equal("caf\u{E9}", "cafe\u{301}"))
        #expect(ExactText.equal("caf\u{E9}", "caf\u{E9}"))
        #expect(ExactText.equal("", ""))
        #expect(!ExactText.equal("", "a"))
        #expect(!ExactText.equal("ab", "a"))
        let long = String(repeating: "key-\u{1F511}-", count: 100)
        #expect(ExactText.equal(long, String(repeating: "key-\u{1F511}-", count: 100)))
        #expect(!ExactText.equal(long, String(long.dropLast()) + "."))
        #expect(ExactText.equal(nil, nil))
        #expect(!ExactText.equal(nil, ""))
        #expect(!ExactText.equal("a", nil))
    }
}
