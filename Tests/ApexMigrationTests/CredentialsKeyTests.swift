import Testing

@testable import ApexMigration

/// A credentials target's key is `credentials:<server>`; the server is what follows, taken by bytes.
@Suite("credentials keys")
struct CredentialsKeyTests {
    @Test("the server of a credentials key is what follows 'credentials:', a combining mark first included")
    func serverOfKey() {
        #expect(Applier.server(of: "credentials") == nil)
        #expect(Applier.server(of: "credentials:https://example.com") == "https://example.com")
        #expect(Applier.server(of: "credentials:") == "")
        // ':' and U+0301 are one Character: a prefix compared by Characters missed this key.
        let server = Applier.server(of: "credentials:\u{301}host")
        #expect(server.map { Array($0.utf8) } == Array("\u{301}host".utf8))
        #expect(Applier.server(of: "Credentials:x") == nil)
    }
}
