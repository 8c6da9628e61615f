import ApexDumpModel

extension AccessControlDescription {
    /// Records the access control in an item's protection as found: `accessControl` as the dump wrote it (DER
    /// hex, text form or objection's words), `accessControlFlags` decoded from it, and `accessControlProtection`,
    /// the class inside it, when it has one. The text shows the flags, and the raw form only when asked
    /// (`inspect --verbose`).
    package func record(in protection: inout [String: String]) {
        protection["accessControl"] = raw
        protection["accessControlFlags"] = flags.words
        if let inner = self.protection { protection["accessControlProtection"] = inner }
    }
}
