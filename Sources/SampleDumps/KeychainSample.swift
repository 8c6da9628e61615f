import ApexDumps
import Foundation

/// One made-up iOS keychain item, as `SecItemCopyMatching` with `kSecReturnAttributes` and `kSecReturnData`
/// would give it back; written out as a plist dictionary, an objection JSON object or a SQLite row.
struct SampleItem {
    /// `genp` or `inet`.
    var itemClass: String
    /// `svce` (generic passwords).
    var service: DumpBytes?
    /// `srvr` (internet passwords).
    var server: String?
    /// `acct`.
    var account: DumpBytes
    /// `gena`.
    var generic: DumpBytes?
    /// `v_Data`.
    var value: Data
    /// `pdmn`.
    var protection: String
    /// `accc`, when the item was written with access control.
    var accessControl: SampleAccessControl?
    /// `agrp`.
    var accessGroup: String
    /// `sync`.
    var synchronizable = false
    /// `labl`.
    var label: String?
    /// `crtr`.
    var creator: UInt32?
    /// `cdat` and `mdat`.
    var created: Date
    var modified: Date

    /// The serialized access control: the DER form `SecAccessControlCopyData` gives. Its made-up biometry
    /// database hashes come from the item's service and account, so every dump format of the item agrees.
    func accessControlData() -> Data? {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in (service?.bytes ?? Data((server ?? "").utf8)) + [0] + account.bytes {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3
        }
        var random = SampleRandom(seed: hash)
        return accessControl?.der(protection: protection, random: &random)
    }

    /// The attribute dictionary, keys as `SecItemCopyMatching` names them; `class` only when `withClass`
    /// (a dump made with `kSecReturnRef`).
    func plist(withClass: Bool) -> PlistValue {
        var pairs: [(String, PlistValue)] = [
            ("acct", plist(account)), ("agrp", .string(accessGroup)), ("cdat", .date(created)),
            ("mdat", .date(modified)), ("pdmn", .string(protection)), ("sync", .integer(synchronizable ? 1 : 0)),
            ("v_Data", .data(value)),
        ]
        if withClass { pairs.append(("class", .string(itemClass))) }
        if let service { pairs.append(("svce", plist(service))) }
        if let server { pairs.append(("srvr", .string(server))) }
        if let generic { pairs.append(("gena", plist(generic))) }
        if let label { pairs.append(("labl", .string(label))) }
        if let creator { pairs.append(("crtr", .integer(Int64(creator)))) }
        if let accc = accessControlData() { pairs.append(("accc", .data(accc))) }
        return .dictionary(pairs)
    }

    private func plist(_ bytes: DumpBytes) -> PlistValue {
        switch bytes {
        case .string(let text): .string(text)
        case .data(let data): .data(data)
        }
    }

    /// objection's `ios keychain dump --json` object: every member a string.
    func objection() -> [(String, String)] {
        let dateText = { (date: Date) -> String in
            let iso = XMLPlistWriter.iso8601(date)
            return iso.replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: " +0000")
        }
        return [
            ("access_control", accessControl?.objectionText ?? "None"),
            ("accessible_attribute", Self.accessibleNames[protection] ?? ""),
            ("account", account.text ?? ""),
            ("alias", ""),
            ("comment", ""),
            ("create_date", dateText(created)),
            ("creator", creator.map { String($0) } ?? ""),
            ("custom_icon", ""),
            ("data", String(validating: value, as: UTF8.self) ?? ""),
            ("dataHex", value.hexString),
            ("description", ""),
            ("entitlement_group", accessGroup),
            ("generic", generic?.text ?? ""),
            ("invisible", ""),
            ("item_class", itemClass == "inet" ? "kSecClassInternetPassword" : "kSecClassGenericPassword"),
            ("label", label ?? ""),
            ("modification_date", dateText(modified)),
            ("negative", ""),
            ("protected", ""),
            ("script_code", ""),
            ("service", service?.text ?? ""),
            ("type", ""),
        ]
    }

    static let accessibleNames = [
        "ak": "kSecAttrAccessibleWhenUnlocked", "ck": "kSecAttrAccessibleAfterFirstUnlock",
        "dk": "kSecAttrAccessibleAlways", "aku": "kSecAttrAccessibleWhenUnlockedThisDeviceOnly",
        "cku": "kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly", "dku": "kSecAttrAccessibleAlwaysThisDeviceOnly",
        "akpu": "kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly",
    ]
}

/// Dump files made from sample items.
enum KeychainDumpWriter {
    /// A dictionary of item arrays by class (`{"genp": [...], "inet": [...]}`), as decrypted-keychain tools write.
    static func plistByClass(_ items: [SampleItem]) -> PlistValue {
        var pairs: [(String, PlistValue)] = []
        for itemClass in ["genp", "inet"] {
            let members = items.filter { $0.itemClass == itemClass }
            guard !members.isEmpty else { continue }
            pairs.append((itemClass, .array(members.map { $0.plist(withClass: false) })))
        }
        return .dictionary(pairs)
    }

    /// One array of attribute dictionaries, each with its `class`.
    static func plistArray(_ items: [SampleItem]) -> PlistValue {
        .array(items.map { $0.plist(withClass: true) })
    }

    /// objection's JSON: `json.dumps(list, indent=2)` (ASCII only, `\uXXXX` escapes).
    static func objectionJSON(_ items: [SampleItem]) -> Data {
        var out = "[\n"
        for (index, item) in items.enumerated() {
            out += "  {\n"
            let members = item.objection()
            for (memberIndex, (key, value)) in members.enumerated() {
                out += "    \(pythonQuote(key)): \(pythonQuote(value))"
                out += memberIndex + 1 < members.count ? ",\n" : "\n"
            }
            out += index + 1 < items.count ? "  },\n" : "  }\n"
        }
        out += "]"
        return Data(out.utf8)
    }

    private static func pythonQuote(_ text: String) -> String {
        var out = "\""
        for unit in text.utf16 {
            switch unit {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x20..<0x7F: out.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
            default:
                let hex = String(unit, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        return out + "\""
    }
}
