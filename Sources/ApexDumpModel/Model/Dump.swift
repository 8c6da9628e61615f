// Model/: the public values every reader produces: formats, dumps, keychain records and preference entries, the
// errors and the limits.

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
    /// An encrypted Finder/iTunes backup of an iPhone: a folder with `Manifest.plist` and `Manifest.db`, read with
    /// its password. Told by the folder's files, not by a file's bytes.
    case encryptedBackup = "ios-encrypted-backup"
    /// Other libraries' items in a keychain database (an on-device migration, where source and target share
    /// one keychain). Not a file format: no reader detects it.
    case keychainDatabase = "keychain-database"

    /// The platform whose data the format holds.
    public var platform: DumpPlatform {
        switch self {
        case .iosPlist, .keychainSQLite, .objectionJSON, .encryptedBackup, .keychainDatabase: .ios
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
    /// What the reader has to say of the dump beyond its records, for people (an encrypted backup's items that
    /// can't be opened, and what a backup never holds); empty for most dumps. Never a value.
    public var notes: [String] = []
    /// How many items the dump holds that can't be opened, by protection (`aku`, …): an encrypted backup's
    /// ThisDeviceOnly items, sealed with the phone's own key. Empty for most dumps.
    public var sealed: [String: Int] = [:]

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
        case .data(let data): String(validUTF8: data)
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
///
/// The attributes live in one shared box: a record passes through readers, importers and their indexes, and a
/// copy is then one reference count instead of one per attribute. The box is written only when this record
/// holds the only reference to it, in place (`record.extra[name] = text` does not copy the dictionary).
public struct KeychainRecord: Sendable, Equatable {
    private struct Fields: Equatable {
        var location: String
        var itemClass: String
        var service: DumpBytes?
        var account: DumpBytes?
        var generic: DumpBytes?
        var value: DumpValue
        var protection: String?
        var accessGroup: String?
        var label: String?
        var creator: UInt32?
        var synchronizable: Bool
        var createdAt: Date?
        var modifiedAt: Date?
        var server: String?
        var protocolCode: String?
        var port: Int?
        var path: String?
        var authenticationType: String?
        var securityDomain: String?
        var accessControl: AccessControlDescription?
        var extra: [String: String]
        var unrecorded: Set<String>
        var unreadable: [String: String]
    }

    private final class Storage: @unchecked Sendable {
        var fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    private var storage: Storage

    /// The fields to write, copied first if another record shares them.
    private var unique: Storage {
        mutating get {
            if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
            return storage
        }
    }

    /// Where in the file: `item 3`, `genp row 17`.
    public var location: String {
        get { storage.fields.location }
        _modify { yield &unique.fields.location }
    }
    /// `class`: `genp`, `inet`, `cert`, `keys`, `idnt`, or as found.
    public var itemClass: String {
        get { storage.fields.itemClass }
        _modify { yield &unique.fields.itemClass }
    }
    /// `svce`.
    public var service: DumpBytes? {
        get { storage.fields.service }
        _modify { yield &unique.fields.service }
    }
    /// `acct`.
    public var account: DumpBytes? {
        get { storage.fields.account }
        _modify { yield &unique.fields.account }
    }
    /// `gena`.
    public var generic: DumpBytes? {
        get { storage.fields.generic }
        _modify { yield &unique.fields.generic }
    }
    /// `v_Data`.
    public var value: DumpValue {
        get { storage.fields.value }
        _modify { yield &unique.fields.value }
    }
    /// `pdmn`: `ak`, `ck`, `dk`, `aku`, `cku`, `dku`, `akpu`, or as found.
    public var protection: String? {
        get { storage.fields.protection }
        _modify { yield &unique.fields.protection }
    }
    /// `agrp`.
    public var accessGroup: String? {
        get { storage.fields.accessGroup }
        _modify { yield &unique.fields.accessGroup }
    }
    /// `labl`.
    public var label: String? {
        get { storage.fields.label }
        _modify { yield &unique.fields.label }
    }
    /// `crtr` as a four-character code.
    public var creator: UInt32? {
        get { storage.fields.creator }
        _modify { yield &unique.fields.creator }
    }
    /// `sync`.
    public var synchronizable: Bool {
        get { storage.fields.synchronizable }
        _modify { yield &unique.fields.synchronizable }
    }
    /// `cdat`.
    public var createdAt: Date? {
        get { storage.fields.createdAt }
        _modify { yield &unique.fields.createdAt }
    }
    /// `mdat`.
    public var modifiedAt: Date? {
        get { storage.fields.modifiedAt }
        _modify { yield &unique.fields.modifiedAt }
    }
    /// `srvr` (internet passwords).
    public var server: String? {
        get { storage.fields.server }
        _modify { yield &unique.fields.server }
    }
    /// `ptcl`.
    public var protocolCode: String? {
        get { storage.fields.protocolCode }
        _modify { yield &unique.fields.protocolCode }
    }
    /// `port`.
    public var port: Int? {
        get { storage.fields.port }
        _modify { yield &unique.fields.port }
    }
    /// `path`.
    public var path: String? {
        get { storage.fields.path }
        _modify { yield &unique.fields.path }
    }
    /// `atyp`.
    public var authenticationType: String? {
        get { storage.fields.authenticationType }
        _modify { yield &unique.fields.authenticationType }
    }
    /// `sdmn`.
    public var securityDomain: String? {
        get { storage.fields.securityDomain }
        _modify { yield &unique.fields.securityDomain }
    }
    /// `accc`, decoded.
    public var accessControl: AccessControlDescription? {
        get { storage.fields.accessControl }
        _modify { yield &unique.fields.accessControl }
    }
    /// Every other attribute, as text, keyed by its name in the dump.
    public var extra: [String: String] {
        get { storage.fields.extra }
        _modify { yield &unique.fields.extra }
    }
    /// The attributes (keychain names: `srvr`, `port`, …) that the dump's format does not record for this item,
    /// so that their absence says nothing about the item: objection's JSON has no field for an internet
    /// password's `srvr`, `ptcl`, `port` or `path`. Empty when the format records every attribute it has.
    public var unrecorded: Set<String> {
        get { storage.fields.unrecorded }
        _modify { yield &unique.fields.unrecorded }
    }

    /// The attributes the dump holds for this item but that can't be read, by name, with what is wrong (never a
    /// value): a `pdmn` that is a number, a `sync` other than 0 or 1, an `accc` that does not decode. The
    /// attribute is then left at its default (``protection`` nil, ``synchronizable`` false, ``accessControl``
    /// nil, an undecoded `accc` kept in ``extra``), and the item alone pays for it: see
    /// ``unreadableProtection``.
    public var unreadable: [String: String] {
        get { storage.fields.unreadable }
        _modify { yield &unique.fields.unreadable }
    }

    /// The attributes that decide an item's protection, in the order ``unreadableProtection`` names them.
    public static let protectionAttributes = ["pdmn", "accc", "sync"]

    /// Why the item's protection is unknown when its `pdmn`, `accc` or `sync` can't be read (``unreadable``),
    /// naming each such attribute; nil when they can. An importer blocks such an item rather than guess.
    public var unreadableProtection: String? {
        let problems = Self.protectionAttributes.compactMap { unreadable[$0] }
        guard !problems.isEmpty else { return nil }
        return "the item's protection is unknown: " + problems.joined(separator: "; ")
    }

    /// Whether the dump's format does not say if the item synchronizes through iCloud Keychain (`sync` is
    /// ``unrecorded``: objection's JSON); ``synchronizable`` is then false.
    public var synchronizableUnknown: Bool { unrecorded.contains("sync") }

    /// Creates a record; everything but the location and class defaults to absent.
    public init(
        location: String, itemClass: String, service: DumpBytes? = nil, account: DumpBytes? = nil,
        generic: DumpBytes? = nil, value: DumpValue = .absent, protection: String? = nil, accessGroup: String? = nil,
        label: String? = nil, creator: UInt32? = nil, synchronizable: Bool = false, createdAt: Date? = nil,
        modifiedAt: Date? = nil, server: String? = nil, protocolCode: String? = nil, port: Int? = nil,
        path: String? = nil, authenticationType: String? = nil, securityDomain: String? = nil,
        accessControl: AccessControlDescription? = nil, extra: [String: String] = [:], unrecorded: Set<String> = [],
        unreadable: [String: String] = [:]
    ) {
        storage = Storage(
            Fields(
                location: location, itemClass: itemClass, service: service, account: account, generic: generic,
                value: value, protection: protection, accessGroup: accessGroup, label: label, creator: creator,
                synchronizable: synchronizable, createdAt: createdAt, modifiedAt: modifiedAt, server: server,
                protocolCode: protocolCode, port: port, path: path, authenticationType: authenticationType,
                securityDomain: securityDomain, accessControl: accessControl, extra: extra, unrecorded: unrecorded,
                unreadable: unreadable))
    }

    /// Whether the two records hold the same fields.
    public static func == (a: KeychainRecord, b: KeychainRecord) -> Bool {
        a.storage === b.storage || a.storage.fields == b.storage.fields
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
        /// The password given for an encrypted backup does not open it (exit 77).
        case wrongPassword
        /// The file is not a keychain dump: empty, of a format no reader knows, or well-formed data of a reader's
        /// format that holds no keychain data (an app's `Info.plist`, a `package.json`, a SQLite database without
        /// `genp` or `inet` tables). A folder's search skips such files; named, one is an error (exit 65).
        case notADump
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
    /// The most items (keychain items and preferences) one run reads from all its dumps together: far more than
    /// a device holds, far less than a binary plist that refers to one item over and over would make.
    public static let maxItemsPerRun = 1 << 19
    /// The most values (items, attributes, elements of containers) one run reads out of all its plist dumps
    /// together; each file has its own bound too, tied to its size.
    public static let maxValuesPerRun = 1 << 24
}
