import Foundation

/// The text that keychain tools print for people, which is not a dump: known by its first bytes, so that the error
/// for it says what to take instead. Only fixed words are matched and named, never the file's text.
enum KnownTextOutput {
    /// Keychain-Dumper's listing: `Generic Password` / `----------------` blocks with `Keychain Data:` lines.
    case keychainDumper
    /// objection's `ios keychain dump` table (without `--json`).
    case objectionTable
    /// objection's `ios keychain dump_raw`: the keychain's NSDictionary descriptions (`svce = …;`).
    case objectionRaw

    /// What the start of a file shows it to be, or nil.
    init?(_ start: Data) {
        let text = String(decoding: start.prefix(16 << 10), as: UTF8.self)
        if text.contains("Generic Password\n----------------") || text.contains("Internet Password\n-----------------")
            || (text.contains("Entitlement Group: ") && text.contains("Keychain Data"))
        {
            self = .keychainDumper
        } else if text.contains("Dumping the iOS keychain") || text.contains("ios keychain dump")
            || (text.contains("Created") && text.contains("Accessible") && text.contains("Service")
                && text.contains("-------------------------  "))
        {
            self = .objectionTable
        } else if text.contains("SecAccessControlRef") || (text.contains("pdmn = ") && text.contains("agrp = ")) {
            self = .objectionRaw
        } else {
            return nil
        }
    }

    /// The tool's output, as people call it.
    var name: String {
        switch self {
        case .keychainDumper: "Keychain-Dumper's text output"
        case .objectionTable: "objection's keychain table (ios keychain dump without --json)"
        case .objectionRaw: "objection's ios keychain dump_raw output"
        }
    }

    /// What to give the tool instead.
    var instead: String {
        switch self {
        case .keychainDumper:
            "it prints values as text, without their access control; give a plist or SQLite export of the "
                + "keychain, or objection's JSON (ios keychain dump --json FILE)"
        case .objectionTable:
            "it cuts values and leaves out the access group; save the dump with ios keychain dump --json FILE and "
                + "give that file"
        case .objectionRaw:
            "give objection's JSON (ios keychain dump --json FILE), or a plist or SQLite export of the keychain"
        }
    }
}
