import ApexKeychain
import Foundation

/// The dump formats the readers know. The raw values are the report's `format` strings.
public enum DumpFormat: String, Sendable, Codable, CaseIterable {
    /// An array of keychain attribute dictionaries, or a dictionary of such arrays by class (XML or binary plist).
    case iosPlist = "ios-plist"
    /// A decrypted keychain export: a SQLite database with `genp` / `inet` tables of cleartext columns.
    case keychainSQLite = "keychain-sqlite"
    /// objection's `ios keychain dump --json` output.
    case objectionJSON = "objection-json"
    /// An Android SharedPreferences XML file.
    case sharedPreferences = "android-shared-preferences"
    /// An Android Jetpack Preferences DataStore file (`*.preferences_pb`).
    case dataStore = "android-datastore"
    /// Other libraries' items in a keychain database (an on-device migration, where source and target share
    /// one keychain). Not a file format: no reader detects it.
    case keychainDatabase = "keychain-database"

    /// The platform whose data the format holds.
    public var platform: DumpPlatform {
        switch self {
        case .iosPlist, .keychainSQLite, .objectionJSON, .keychainDatabase: .ios
        case .sharedPreferences, .dataStore: .android
        }
    }
}

/// The platform a dump comes from.
public enum DumpPlatform: String, Sendable, Codable {
    /// iOS keychain items.
    case ios
    /// Android preferences.
    case android
}

/// One dump file, read: where it is, its format, and its raw records.
public struct Dump: Sendable {
    /// The file's path as given.
    public var path: String
    /// The format, detected from the content.
    public var format: DumpFormat
    /// The records.
    public var content: Content

    /// What a dump holds.
    public enum Content: Sendable {
        /// iOS keychain items.
        case keychain([KeychainRecord])
        /// Android preferences: the file's name (without folder, e.g. `RN_KEYCHAIN.xml`) and its entries in file order.
        case preferences([PreferenceEntry])
    }

    /// Creates a dump.
    public init(path: String, format: DumpFormat, content: Content) {
        self.path = path
        self.format = format
        self.content = content
    }

    /// The file name without its folder.
    public var fileName: String { (path as NSString).lastPathComponent }
}

/// An attribute that a dump may hold as text or as bytes (`acct`, `svce` and `gena`: expo-secure-store writes data).
public enum DumpBytes: Sendable, Equatable, Hashable {
    /// Text as found.
    case string(String)
    /// Bytes as found.
    case data(Data)

    /// The bytes: UTF-8 for text.
    public var bytes: Data {
        switch self {
        case .string(let text): Data(text.utf8)
        case .data(let data): data
        }
    }

    /// The text: as found, or the bytes when they are valid UTF-8.
    public var text: String? {
        switch self {
        case .string(let text): text
        case .data(let data): String(validating: data, as: UTF8.self)
        }
    }
}

/// The value of a record.
public enum DumpValue: Sendable, Equatable {
    /// The value's bytes.
    case data(Data)
    /// The dump has no value for the item (e.g. a dump without data, or a key whose data was not displayed).
    case absent
    /// The dump holds a value that can't be trusted; the reason says why (never the value).
    case damaged(String)
}

/// An item's access control as a dump describes it: the flags, the protection inside it, and the text form.
public struct AccessControlDescription: Sendable, Equatable {
    /// The constraints and operators, as `SecAccessControlCreateFlags`.
    public var flags: AccessControlFlags
    /// The protection domain (`pdmn`) recorded inside the access control, if the dump has it.
    public var protection: String?
    /// How the dump wrote it (text form, flag words, or `der:<hex>`), for reports.
    public var raw: String

    /// Creates a description.
    public init(flags: AccessControlFlags, protection: String? = nil, raw: String) {
        self.flags = flags
        self.protection = protection
        self.raw = raw
    }
}

/// One keychain item of an iOS dump, with its attributes as found (`SecItemCopyMatching` names).
public struct KeychainRecord: Sendable, Equatable {
    /// Where in the file: `item 3`, `genp row 17`.
    public var location: String
    /// `class`: `genp`, `inet`, `cert`, `keys`, `idnt`, or as found.
    public var itemClass: String
    /// `svce`.
    public var service: DumpBytes?
    /// `acct`.
    public var account: DumpBytes?
    /// `gena`.
    public var generic: DumpBytes?
    /// `v_Data`.
    public var value: DumpValue
    /// `pdmn`: `ak`, `ck`, `dk`, `aku`, `cku`, `dku`, `akpu`, or as found.
    public var protection: String?
    /// `agrp`.
    public var accessGroup: String?
    /// `labl`.
    public var label: String?
    /// `crtr` as a four-character code.
    public var creator: UInt32?
    /// `sync`.
    public var synchronizable: Bool
    /// `cdat`.
    public var createdAt: Date?
    /// `mdat`.
    public var modifiedAt: Date?
    /// `srvr` (internet passwords).
    public var server: String?
    /// `ptcl`.
    public var protocolCode: String?
    /// `port`.
    public var port: Int?
    /// `path`.
    public var path: String?
    /// `atyp`.
    public var authenticationType: String?
    /// `sdmn`.
    public var securityDomain: String?
    /// `accc`, decoded.
    public var accessControl: AccessControlDescription?
    /// Every other attribute, as text, keyed by its name in the dump.
    public var extra: [String: String]

    /// Creates a record; everything but the location and class defaults to absent.
    public init(
        location: String, itemClass: String, service: DumpBytes? = nil, account: DumpBytes? = nil,
        generic: DumpBytes? = nil, value: DumpValue = .absent, protection: String? = nil, accessGroup: String? = nil,
        label: String? = nil, creator: UInt32? = nil, synchronizable: Bool = false, createdAt: Date? = nil,
        modifiedAt: Date? = nil, server: String? = nil, protocolCode: String? = nil, port: Int? = nil,
        path: String? = nil, authenticationType: String? = nil, securityDomain: String? = nil,
        accessControl: AccessControlDescription? = nil, extra: [String: String] = [:]
    ) {
        self.location = location
        self.itemClass = itemClass
        self.service = service
        self.account = account
        self.generic = generic
        self.value = value
        self.protection = protection
        self.accessGroup = accessGroup
        self.label = label
        self.creator = creator
        self.synchronizable = synchronizable
        self.createdAt = createdAt
        self.modifiedAt = modifiedAt
        self.server = server
        self.protocolCode = protocolCode
        self.port = port
        self.path = path
        self.authenticationType = authenticationType
        self.securityDomain = securityDomain
        self.accessControl = accessControl
        self.extra = extra
    }
}

/// One Android preference: its name and typed value, as found.
public struct PreferenceEntry: Sendable, Equatable {
    /// The preference's name (the key in the file).
    public var name: String
    /// The value.
    public var value: PreferenceValue

    /// Creates an entry.
    public init(name: String, value: PreferenceValue) {
        self.name = name
        self.value = value
    }
}

/// A typed preference value: SharedPreferences' element types and DataStore's `Value` oneof.
public enum PreferenceValue: Sendable, Equatable {
    /// `<string>` / DataStore string: the text exactly as stored (whitespace kept).
    case string(String)
    /// `<boolean>`.
    case boolean(Bool)
    /// `<int>`.
    case int(Int32)
    /// `<long>`.
    case long(Int64)
    /// `<float>`.
    case float(Float)
    /// DataStore double.
    case double(Double)
    /// `<set>` of strings.
    case stringSet([String])
    /// DataStore bytes.
    case bytes(Data)
}

/// Why a dump can't be read. The message names the file and the problem, never a value.
public struct DumpError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure (the CLI maps kinds to exit codes).
    public enum Kind: String, Sendable, Equatable {
        /// The file does not exist or can't be read (exit 66).
        case unreadable
        /// The file is malformed, or of a format no reader knows (exit 65).
        case malformed
        /// The file is of a known kind that can't be used, e.g. an encrypted device `keychain-2.db` (exit 65).
        case unsupported
    }

    /// The kind.
    public let kind: Kind
    /// The file.
    public let path: String
    /// What is wrong.
    public let message: String

    /// Creates an error.
    public init(_ kind: Kind, path: String, _ message: String) {
        self.kind = kind
        self.path = path
        self.message = message
    }

    /// `path: message`.
    public var description: String { "\(path): \(message)" }
}

/// Bounds on untrusted input: what a reader refuses rather than trying to hold.
public enum DumpLimits {
    /// The largest dump file read, in bytes (a 100k-item dump is a few tens of MB).
    public static let maxFileBytes = 512 << 20
    /// The largest XML preferences file, in bytes.
    public static let maxXMLBytes = 64 << 20
    /// The deepest nesting of containers a reader follows (plist, JSON, DER, protobuf).
    public static let maxDepth = 32
}
