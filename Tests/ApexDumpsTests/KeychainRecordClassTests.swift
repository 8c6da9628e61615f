import ApexDumps
import ApexKeychain
import Testing

@Suite struct KeychainRecordClassTests {
    @Test(
        "knownClass names each of the keychain's five classes by its code, and is nil for any other code",
        arguments: [
            ("genp", KeychainItemClass.genericPassword), ("inet", .internetPassword), ("cert", .certificate),
            ("keys", .key), ("idnt", .identity),
        ])
    func knownClass(code: String, expected: KeychainItemClass) {
        let record = KeychainRecord(location: "item 1", itemClass: code)
        #expect(record.knownClass == expected)
        #expect(record.itemClass == code)
    }

    @Test(
        "a class code the keychain does not have is no known class, and stays as found",
        arguments: ["", "GENP", "genp ", "key", "kSecClassGenericPassword", "gen\u{0}p"])
    func unknownClass(code: String) {
        let record = KeychainRecord(location: "item 1", itemClass: code)
        #expect(record.knownClass == nil)
        #expect(record.itemClass == code)
    }

    @Test("protectionDomain is the pdmn code as found, typed, for each of the keychain's seven codes")
    func protectionDomain() {
        for domain in ProtectionDomain.allCases {
            let record = KeychainRecord(location: "item 1", itemClass: "genp", protection: domain.rawValue)
            #expect(record.protectionDomain == domain)
        }
        // As found, not as mapped: `dk` has no class of the package's, and is still `dk`.
        #expect(KeychainRecord(location: "item 1", itemClass: "genp", protection: "dk").protectionDomain == .dk)
    }

    @Test(
        "protectionDomain is nil when the dump records no pdmn or one the keychain does not have (the text stays)",
        arguments: [nil, "", "AK", "kSecAttrAccessibleAlways", "7", "akpu "] as [String?])
    func unknownProtectionDomain(pdmn: String?) {
        let record = KeychainRecord(location: "item 1", itemClass: "genp", protection: pdmn)
        #expect(record.protectionDomain == nil)
        #expect(record.protection == pdmn)
    }

    @Test("the access control's own protection class is typed the same way, apart from the item's pdmn")
    func accessControlProtectionDomain() {
        let control = AccessControlDescription(flags: [.userPresence], protection: "akpu", raw: "userPresence")
        let record = KeychainRecord(location: "item 1", itemClass: "genp", protection: "ck", accessControl: control)
        #expect(record.protectionDomain == .ck)
        #expect(record.accessControl?.protectionDomain == .akpu)
        #expect(AccessControlDescription(flags: [], protection: "zz", raw: "").protectionDomain == nil)
        #expect(AccessControlDescription(flags: [], raw: "").protectionDomain == nil)
    }
}
