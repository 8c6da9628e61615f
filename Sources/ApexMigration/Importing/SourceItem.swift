import ApexDumpModel
import ApexKeychain
import Foundation

/// The libraries items are migrated from. Raw values are the report's `library` strings.
public enum SourceLibrary: String, Sendable, Codable, CaseIterable {
    /// react-native-keychain.
    case reactNativeKeychain = "react-native-keychain"
    /// expo-secure-store.
    case expoSecureStore = "expo-secure-store"
    /// react-native-sensitive-info.
    case reactNativeSensitiveInfo = "react-native-sensitive-info"
    /// react-native-encrypted-storage.
    case reactNativeEncryptedStorage = "react-native-encrypted-storage"
}

/// Where a source item was found: the file, its format, and the place in it.
///
/// Origins compare byte for byte (a path or a name in NFC and the same in NFD are two origins, as the file system
/// and the keychain tell them apart), and a location names its place unambiguously: two items never share one.
public struct SourceOrigin: Sendable, Hashable, Codable {
    /// The dump file.
    public var path: String
    /// Its format.
    public var format: DumpFormat
    /// The place in the file: `genp item 3`, `entries "auth:u", "auth:p", "auth:c"`.
    public var location: String

    /// Creates an origin.
    public init(path: String, format: DumpFormat, location: String) {
        self.path = path
        self.format = format
        self.location = location
    }

    /// Byte for byte.
    public static func == (a: SourceOrigin, b: SourceOrigin) -> Bool {
        a.format == b.format && ExactText.equal(a.path, b.path) && ExactText.equal(a.location, b.location)
    }

    /// Byte for byte, as ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) {
        ExactText.hash(path, into: &hasher)
        hasher.combine(format)
        ExactText.hash(location, into: &hasher)
    }

    /// `name` in double quotes, with `"` and `\` escaped by a backslash: names joined in a location stay
    /// apart whatever they hold.
    public static func quoted(_ name: String) -> String {
        var text = "\""
        for scalar in name.unicodeScalars {
            if scalar == "\"" || scalar == "\\" { text.unicodeScalars.append("\\") }
            text.unicodeScalars.append(scalar)
        }
        return text + "\""
    }
}

/// What an item looked like in the source, as found: enough to recognise it, never its value.
public struct SourceDescription: Sendable, Equatable, Codable {
    /// The keychain item class as found (iOS: `genp`, `inet`, or any code the dump holds, kept as it is: the
    /// report types it as ``MigrationReport/ItemClassFound``); nil on Android.
    public var itemClass: String?
    /// The service as found (iOS `svce`; Android: the entry prefix).
    public var service: String?
    /// The account as found: the key, or the username. Personal data: reports show it only when asked.
    public var account: String?
    /// The server of an internet password.
    public var server: String?
    /// The access group.
    public var accessGroup: String?
    /// The protection as found: `pdmn`, `accessControl` (flags), `synchronizable`, `cipher`,
    /// `requireAuthentication`, `keystoreAlias`, … (names and values as the source spells them).
    public var protection: [String: String]

    /// Creates a description.
    public init(
        itemClass: String? = nil, service: String? = nil, account: String? = nil, server: String? = nil,
        accessGroup: String? = nil, protection: [String: String] = [:]
    ) {
        self.itemClass = itemClass
        self.service = service
        self.account = account
        self.server = server
        self.accessGroup = accessGroup
        self.protection = protection
    }
}

/// A source item's secret: readable, or sealed on the source device (the one the dump came from, not the
/// report's ``MigrationReport/targetDevice``). Its descriptions never show the secret.
public enum SourceValue: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// A value (a string item's UTF-8, or bytes).
    case value(Data)
    /// Credentials: a username and a password.
    case credentials(username: String, password: String)
    /// The value can't be read off the source device; the reason says why (e.g. "Android Keystore key").
    case sealed(String)

    /// `value (N bytes)`, `credentials`, `sealed: reason`: never the secret.
    public var description: String {
        switch self {
        case .value(let data): "value (\(data.count) bytes)"
        case .credentials: "credentials"
        case .sealed(let reason): "sealed: \(reason)"
        }
    }

    /// As ``description``.
    public var debugDescription: String { description }
}

/// What the package stores for a source item: the item kind. Raw values are the report's `kind` strings.
public enum TargetKind: String, Sendable, Codable, CaseIterable {
    /// A string value (`setItem`).
    case string
    /// A bytes value (`setBytes`).
    case bytes
    /// Credentials (`setCredentials`).
    case credentials
}

/// Where and how a source item is to be written through the core.
///
/// A `blocked` item keeps the target it was meant for, so a report can say which key the app will miss. When
/// its protection has no equivalent in the package (or can't be told), ``protectionKnown`` is false: the target
/// still names the service, key and kind, and ``options`` is empty and means nothing. Such a target is never
/// written.
public struct TargetItem: Sendable, Equatable, Codable {
    /// The target keychain's service.
    public var service: String
    /// The key (`credentials` / `credentials:<server>` for credentials).
    public var key: String
    /// How the value is stored.
    public var kind: TargetKind
    /// The protection to write with (never weaker than the source's); `label` stays nil (credentials keep the
    /// username as their label). Empty, and meaningless, when ``protectionKnown`` is false.
    public var options: SetOptions
    /// The access group, when the source item was in a group other than the app's default.
    public var accessGroup: String?
    /// Whether ``options`` is the protection the item would have: false when the source's protection has no
    /// equivalent in the package, or can't be told (the item is then `blocked`, never written).
    public var protectionKnown: Bool

    /// Creates a target.
    public init(service: String, key: String, kind: TargetKind, options: SetOptions, accessGroup: String? = nil) {
        self.service = service
        self.key = key
        self.kind = kind
        self.options = options
        self.accessGroup = accessGroup
        self.protectionKnown = true
    }

    /// The target of an item whose protection has no equivalent in the package: where it was meant to go, with no
    /// protection (``protectionKnown`` false).
    public static func unknownProtection(
        service: String, key: String, kind: TargetKind, accessGroup: String? = nil
    ) -> TargetItem {
        var target = TargetItem(service: service, key: key, kind: kind, options: SetOptions(), accessGroup: accessGroup)
        target.protectionKnown = false
        return target
    }

    private enum CodingKeys: String, CodingKey {
        case service, key, kind, options, accessGroup, protectionKnown
    }

    /// Decodes a target; one encoded before ``protectionKnown`` existed has a known protection.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        service = try c.decode(String.self, forKey: .service)
        key = try c.decode(String.self, forKey: .key)
        kind = try c.decode(TargetKind.self, forKey: .kind)
        options = try c.decode(SetOptions.self, forKey: .options)
        accessGroup = try c.decodeIfPresent(String.self, forKey: .accessGroup)
        protectionKnown = try c.decodeIfPresent(Bool.self, forKey: .protectionKnown) ?? true
    }
}

/// An importer's own verdict on an item, before the plan looks at the target.
public enum SourceVerdict: Sendable, Equatable {
    /// Migrate it (the plan decides create / exists / conflict / blocked against the target).
    case migrate
    /// The protection has no equivalent in the package (e.g. an and-combination); the reason says why.
    case blocked(String)
    /// An older copy the source library itself would never read; the reason names the copy that wins.
    case shadowed(String)
    /// Left out on purpose: another SDK's item, or filtered by the user.
    case skipped(String)
    /// The item can be migrated only with what this run was not given: FacebookConceal's key file, a machine
    /// with AES-256-GCM, the bundle id that names the app's default service, a service only the app can name.
    /// The item is `blocked` and stays pending, and a run given it migrates the item. The reason says what is
    /// missing and how to give it.
    case needsInput(String)

    /// Why the item is not migrated as it is, or nil for ``migrate``.
    public var reason: String? {
        switch self {
        case .migrate: nil
        case .blocked(let why), .shadowed(let why), .skipped(let why), .needsInput(let why): why
        }
    }
}

/// One item an importer found: where, what it looked like, its value (or why it is sealed), the mapped target,
/// its verdict, and notes on every lossy or inferred step.
///
/// Its description shows no secret: values are described by size only.
public struct SourceItem: Sendable, Equatable, CustomStringConvertible {
    /// The fields, in one shared box: an item passes through importers, plans and reports, and a copy is then
    /// one reference count instead of one per string. Written only when this item holds the only reference, in
    /// place (`item.notes.append(note)` does not copy the array). The same pattern as ``KeychainRecord``'s.
    private struct Fields: Equatable {
        var library: SourceLibrary
        var platform: DumpPlatform
        var origin: SourceOrigin
        var source: SourceDescription
        var value: SourceValue
        var target: TargetItem?
        var verdict: SourceVerdict
        var notes: [String]
        var copyOf: SourceOrigin?
    }

    private final class Storage: @unchecked Sendable {
        var fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    private var storage: Storage

    /// The fields to write, copied first if another item shares them.
    private var unique: Storage {
        mutating get {
            if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
            return storage
        }
    }

    /// The library that wrote it.
    public var library: SourceLibrary {
        get { storage.fields.library }
        _modify { yield &unique.fields.library }
    }
    /// The platform.
    public var platform: DumpPlatform {
        get { storage.fields.platform }
        _modify { yield &unique.fields.platform }
    }
    /// Where it was found.
    public var origin: SourceOrigin {
        get { storage.fields.origin }
        _modify { yield &unique.fields.origin }
    }
    /// What it looked like.
    public var source: SourceDescription {
        get { storage.fields.source }
        _modify { yield &unique.fields.source }
    }
    /// Its secret.
    public var value: SourceValue {
        get { storage.fields.value }
        _modify { yield &unique.fields.value }
    }
    /// Where it goes; nil when it has no place in the package (its verdict then says why).
    public var target: TargetItem? {
        get { storage.fields.target }
        _modify { yield &unique.fields.target }
    }
    /// The importer's verdict.
    public var verdict: SourceVerdict {
        get { storage.fields.verdict }
        _modify { yield &unique.fields.verdict }
    }
    /// Notes for the report: inferred defaults, nearest-stronger mappings, choices the user can change.
    public var notes: [String] {
        get { storage.fields.notes }
        _modify { yield &unique.fields.notes }
    }
    /// For an item the importer marked shadowed as a copy of an item of another dump (the same keychain item,
    /// read twice): where that item is. The text report counts the copy on that item's row.
    public var copyOf: SourceOrigin? {
        get { storage.fields.copyOf }
        _modify { yield &unique.fields.copyOf }
    }

    /// Creates a source item.
    public init(
        library: SourceLibrary, platform: DumpPlatform, origin: SourceOrigin, source: SourceDescription,
        value: SourceValue, target: TargetItem?, verdict: SourceVerdict = .migrate, notes: [String] = []
    ) {
        storage = Storage(
            Fields(
                library: library, platform: platform, origin: origin, source: source, value: value, target: target,
                verdict: verdict, notes: notes))
    }

    /// Whether the two items are the same in every field.
    public static func == (a: SourceItem, b: SourceItem) -> Bool {
        a.storage === b.storage || a.storage.fields == b.storage.fields
    }

    /// `library platform path location → service/key (verdict)`, without the value or the account.
    public var description: String {
        let to = target.map { "\($0.service)/\($0.key) [\($0.kind.rawValue)]" } ?? "no target"
        return
            "\(library.rawValue) \(platform.rawValue) \(origin.path) \(origin.location) → \(to) (\(verdict)); \(value)"
    }
}
