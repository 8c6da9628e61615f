import ApexCrypto
import ApexDumpModel
import ApexKeychain
import Foundation

/// A migration's records in the target keychain, in the package's own service `apex-keychain.migration`:
///
/// - `key:<id>`: a random key for the value fingerprints below (never leaves the keychain);
/// - `entries:<id>:<sequence>`: for each target item the migration writes, a keyed fingerprint (HMAC-SHA-256)
///   of the value it wrote and whether the write was read back, by target digest; it lets a later run tell "the
///   same value is already there" from "another value is there" without reading an item that would prompt.
///   One record holds the items of one batch (the run's transaction, ``MigrationPolicy/Batching``), written
///   in the same transaction as its items and again with the verified ones, so the ledger costs two writes per
///   batch, not per item; a later record overrides an earlier one for the same target;
/// - `journal:<id>:<target digest>`: a source item removed to make room for its target (on-device migration),
///   kept until the target item is verified, so that an interrupted run can put it back;
/// - `pending:<id>`: after a run that left items a later run may still migrate, their target digests and how
///   many runs each has stayed pending (the give-up policy counts them); a later start-up retries only these. It
///   also records the library of each pending item, and the libraries the runs so far planned: a run without a
///   library's importer carries that library's pending items on as they are, and leaves the migration open;
/// - `done:<id>`: the completion marker, whose label is `{"libraries":[…]}`: the libraries (``SourceLibrary`` raw
///   values) whose items the runs up to the completing one planned. A later start-up with importers of these
///   libraries only costs this lookup; a library added since is planned in full. A marker of an earlier version is
///   `1`, without the set (``Completion/legacy``): it covers no library, and the next start-up counts as planned
///   each library one of whose items' targets has an entry, and plans the others in full, once.
///
/// The records are items of the package, protected `afterFirstUnlockThisDeviceOnly`, without access control. An
/// item under a record's key that is not of that form (one a tool, a dump or an earlier version put in the
/// service) is no record: it is read as no record at all, and a write of the record replaces it. A journal record
/// of that form whose value doesn't decode is damage, not another writer's item: it names parked items only it
/// can put back, so it stops the run (``journalRecords()``) and is kept. None is ever read with a prompt. The
/// writes a batch makes
/// (``record(_:)``, ``journal(_:for:)``, ``removeJournal(for:)``) are synchronous, for
/// ``KeychainDatabase/atomically(_:)``; they need ``prepareForWrites()`` first.
final class Ledger {
    static let service = "apex-keychain.migration"

    let keychain: Keychain
    let id: String
    private var key: Data?
    /// Every entry, by target digest, once loaded; and the sequence number the next record takes.
    private var loaded: (entries: [String: Entry], next: Int)?

    init(target: MigrationTarget, id: String) throws(KeychainError) {
        keychain = try target.keychain(service: Self.service)
        self.id = id
    }

    static let protection = SetOptions(accessible: .afterFirstUnlockThisDeviceOnly)

    enum EntryState: String, Codable {
        case pending
        case verified
    }

    struct Entry: Codable, Equatable {
        var fingerprint: String
        var state: EntryState
        /// On the device, with `removeSource`: the source items the importer found to be older copies of this
        /// target's item, which stay where they are. Once the newer copy's source is removed, a later run would
        /// take such a copy for the item itself; it finds it here and leaves it shadowed.
        var staleCopies: [SourceKey]?
        /// On the device, with `removeSource`: the other library's item this target is made from in place
        /// (``Keychain/convert(_:to:_:_:)``), whose primary key the target takes. Written with the pending entry,
        /// before the conversion: a run stopped after the conversion and before the verified entry leaves no
        /// source item to plan, and the next run verifies the target here, by its fingerprint.
        var converted: SourceKey?
    }

    // MARK: Records

    /// The bytes of the record under `key`, or nil when there is none or the item there is not a record of the
    /// ledger's form (protected as the ledger protects its records, without access control): an item put there
    /// by someone else is never read, so it never prompts.
    private func record(_ key: String) async throws(KeychainError) -> Data? {
        guard let info = try await keychain.getItemInfo(key), Self.isRecord(info) else { return nil }
        return try await keychain.getBytes(key)
    }

    /// Whether an item is of a record's form: protected as the ledger protects its records, without access control.
    private static func isRecord(_ info: ItemInfo) -> Bool {
        info.accessControl == .none && info.accessible == protection.accessible && !info.synchronizable
    }

    // MARK: Completion marker

    /// What a completion marker says.
    enum Completion: Equatable {
        /// A marker of an earlier version (`1`), which did not record the libraries: it covers none, as the app may
        /// have added an importer in the very release that brings this version. ``Migration/runIfNeeded(progress:)``
        /// then runs once: a library one of whose items' targets has an entry counts as planned by the earlier
        /// runs (their items are not planned again: what the app changed or removed since stays so), the others
        /// are planned in full, and the marker is rewritten with the set. That one run reads every source item;
        /// the alternative, taking the marker for the current importers, would never migrate an importer added
        /// with the upgrade under the same ``Migration/id``.
        case legacy
        /// The libraries (raw values) whose items the completed runs planned.
        case libraries(Set<String>)

        /// Whether the marker covers every one of `libraries`.
        func covers(_ libraries: Set<String>) -> Bool {
            switch self {
            case .legacy: false
            case .libraries(let done): libraries.isSubset(of: done)
            }
        }
    }

    /// What a completion marker records, as JSON in its label (`{"libraries":[…]}`): read with its attributes, in
    /// one look-up that never reads a value.
    private struct Marker: Codable {
        var libraries: [String]
    }

    /// The completion marker, or nil when there is none: no item, or one that is not a marker (not of a record's
    /// form, a label that is not a marker's, or, without a label, another value than an earlier version's `1`):
    /// an item a tool or a dump put under its key does not complete a migration.
    func completion() async throws(KeychainError) -> Completion? {
        let key = "done:\(id)"
        guard let info = try await keychain.getItemInfo(key), Self.isRecord(info) else { return nil }
        guard let label = info.label else {
            return try await keychain.getBytes(key) == Data("1".utf8) ? .legacy : nil
        }
        guard let marker = try? JSONDecoder().decode(Marker.self, from: Data(label.utf8)) else { return nil }
        return .libraries(Set(marker.libraries))
    }

    /// Records that the migration is complete for `libraries` (raw values): their list in the label, and in the
    /// value too (which an earlier version, checking only that the marker exists, never reads).
    func markDone(libraries: Set<String>) async throws(KeychainError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(Marker(libraries: libraries.sorted())),
            let text = String(data: data, encoding: .utf8)
        else {
            throw KeychainError(.INTERNAL, "the migration's completion marker could not be encoded")
        }
        var options = Self.protection
        options.label = text
        try await keychain.setBytes("done:\(id)", data, options)
    }

    // MARK: Pending items

    /// What a run left pending: for each target digest, how many runs it has stayed pending; and, for an
    /// on-device source, where the pending items' sources are (so that the next run reads only their values).
    struct Pending: Codable, Equatable {
        var runs: [String: Int] = [:]
        var sources: [SourceKey] = []
        /// The libraries (raw values) whose items the runs so far planned in full; nil in a record of an earlier
        /// version, which stands for the libraries of the importers of the run that reads it.
        var libraries: [String]?
        /// The library (raw value) of each pending item, by target digest: a run without that library's importer
        /// carries the item on as it is (``Migration``), where it would otherwise take it for gone. Nil in a record
        /// of an earlier version, whose items stand for the importers of the run that reads it.
        var libraryOf: [String: String]? = [:]
    }

    /// The primary key of a source item in a keychain database: names only, never a value.
    struct SourceKey: Codable, Hashable {
        var itemClass: String, service: String, account: String, accessGroup: String, synchronizable: Bool
        var server: String, securityDomain: String, protocolCode: String, authenticationType: String, port: Int
        var path: String

        init(_ key: ItemAttributes.PrimaryKey) {
            itemClass = key.itemClass.rawValue
            (service, account, accessGroup, synchronizable) = (
                key.service, key.account, key.accessGroup, key.synchronizable
            )
            (server, securityDomain, protocolCode) = (key.server, key.securityDomain, key.protocolCode)
            (authenticationType, port, path) = (key.authenticationType, key.port, key.path)
        }

        /// The primary key, or nil for a class the package doesn't know.
        var primaryKey: ItemAttributes.PrimaryKey? {
            guard let itemClass = ItemClass(rawValue: itemClass) else { return nil }
            return ItemAttributes.PrimaryKey(
                itemClass: itemClass, service: service, account: account, accessGroup: accessGroup,
                synchronizable: synchronizable, server: server, securityDomain: securityDomain,
                protocolCode: protocolCode, authenticationType: authenticationType, port: port, path: path)
        }
    }

    /// What the runs so far left pending; nil when none left anything pending, or when the item under the
    /// record's key is not such a record (a value that doesn't decode: it was not written by a migration, and the
    /// run plans every item again, which loses nothing; the next record replaces it).
    func pending() async throws(KeychainError) -> Pending? {
        let key = "pending:\(id)"
        guard let info = try await keychain.getItemInfo(key) else { return nil }
        pendingKeyHeld = true
        guard Self.isRecord(info), let data = try await keychain.getBytes(key) else { return nil }
        return try? JSONDecoder().decode(Pending.self, from: data)
    }

    /// Whether ``pending()`` found an item under the record's key, a record or not.
    private(set) var pendingKeyHeld = false

    /// Records what a run left pending, or removes the record when nothing is.
    func setPending(_ pending: Pending) async throws(KeychainError) {
        guard !pending.runs.isEmpty else { return try await keychain.removeItem("pending:\(id)") }
        guard let data = try? JSONEncoder().encode(pending) else {
            throw KeychainError(.INTERNAL, "the migration's record of pending items could not be encoded")
        }
        try await keychain.setBytes("pending:\(id)", data, Self.protection)
    }

    // MARK: Entries

    /// The entry of a target item, from the records read once per ledger.
    func entry(for target: TargetItem) async throws(KeychainError) -> Entry? {
        try await load().entries[Self.digest(target)]
    }

    /// The pending entries whose target was made in place from another library's item (``Entry/converted``), by
    /// digest.
    func pendingConversions() async throws(KeychainError) -> [(digest: String, entry: Entry, key: SourceKey)] {
        try await load().entries.compactMap { digest, entry in
            guard entry.state == .pending, let key = entry.converted else { return nil }
            return (digest, entry, key)
        }
    }

    /// Whether `value`, read from a target of unknown kind, is the one `fingerprint` was made of.
    func matches(_ fingerprint: String, _ value: Data, label: String?) async throws(KeychainError) -> Bool {
        var candidates: [(SourceValue, TargetKind)] = [(.value(value), .string), (.value(value), .bytes)]
        if let label, let password = String(data: value, encoding: .utf8) {
            candidates.append((.credentials(username: label, password: password), .credentials))
        }
        for (candidate, kind) in candidates {
            if try await self.fingerprint(of: candidate, kind: kind, create: false) == fingerprint { return true }
        }
        return false
    }

    /// A batch of entries that the ledger keeps in one record: written as pending before the items are, and
    /// again once they are read back.
    struct Batch {
        fileprivate let recordKey: String
        private(set) var entries: [String: Entry] = [:]

        fileprivate init(recordKey: String) { self.recordKey = recordKey }

        /// Sets the entry of the target whose ``Ledger/digest(_:)`` is `digest`.
        mutating func set(_ entry: Entry, at digest: String) { entries[digest] = entry }

        mutating func markVerified(_ digest: String) { entries[digest]?.state = .verified }

        /// Drops the target's entry: the record, written again, no longer claims the item.
        mutating func remove(_ digest: String) { entries[digest] = nil }
    }

    /// A new, empty batch under the next free record name.
    func newBatch() async throws(KeychainError) -> Batch {
        let next = try await load().next
        loaded?.next = next + 1
        return Batch(recordKey: "entries:\(id):" + Self.sequence(next))
    }

    /// Writes (or rewrites) a batch's record. The entries read back (``entry(for:)``) have it once
    /// ``remember(_:)`` was told that its transaction committed.
    func record(_ batch: Batch) throws(KeychainError) {
        try keychain.setBytesSynchronously(batch.recordKey, try Self.encode(batch.entries), Self.protection)
    }

    /// Takes a batch whose record is committed into the entries read back.
    func remember(_ batch: Batch) {
        // In place: a copy of `loaded` first would copy every entry on each batch.
        loaded?.entries.merge(batch.entries) { _, new in new }
    }

    /// A record's JSON, `{"<digest>":{"fingerprint":"…","state":"…"},…}`, written directly: JSONEncoder would cost
    /// more than the batch's writes. Digests, fingerprints and states are hex, Base64 and words, which JSON
    /// needs no escape for (a text that would is encoded by JSONEncoder instead); stale copies, rare, are too.
    static func encode(_ entries: [String: Entry]) throws(KeychainError) -> Data {
        func plain(_ text: String) -> Bool {
            text.utf8.allSatisfy { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") && $0 < 0x80 }
        }
        var out = [UInt8]()
        out.reserveCapacity(entries.count * 96 + 2)
        out.append(UInt8(ascii: "{"))
        for (digest, entry) in entries {
            guard plain(digest), plain(entry.fingerprint) else {
                guard let data = try? JSONEncoder().encode(entries) else {
                    throw KeychainError(.INTERNAL, "the migration's ledger record could not be encoded")
                }
                return data
            }
            if out.count > 1 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: digest.utf8)
            out.append(contentsOf: #"":{"fingerprint":""#.utf8)
            out.append(contentsOf: entry.fingerprint.utf8)
            out.append(contentsOf: #"","state":""#.utf8)
            out.append(contentsOf: entry.state.rawValue.utf8)
            out.append(UInt8(ascii: "\""))
            if let stale = entry.staleCopies {
                guard let data = try? JSONEncoder().encode(stale) else {
                    throw KeychainError(.INTERNAL, "the migration's ledger record could not be encoded")
                }
                out.append(contentsOf: #","staleCopies":"#.utf8)
                out.append(contentsOf: data)
            }
            if let converted = entry.converted {
                guard let data = try? JSONEncoder().encode(converted) else {
                    throw KeychainError(.INTERNAL, "the migration's ledger record could not be encoded")
                }
                out.append(contentsOf: #","converted":"#.utf8)
                out.append(contentsOf: data)
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "}"))
        return Data(out)
    }

    /// Reads every `entries` record once, in sequence order (a later one overrides an earlier one).
    private func load() async throws(KeychainError) -> (entries: [String: Entry], next: Int) {
        if let loaded { return loaded }
        var records: [(Int, String)] = []
        for (key, rest) in try await recordKeys("entries") {
            if let number = Int(rest) { records.append((number, key)) }
        }
        records.sort { $0.0 < $1.0 }
        var entries: [String: Entry] = [:]
        for (_, key) in records {
            guard let data = try await record(key),
                let batch = try? JSONDecoder().decode([String: Entry].self, from: data)
            else { continue }
            entries.merge(batch) { _, later in later }
        }
        let state = (entries: entries, next: (records.last?.0 ?? 0) + 1)
        loaded = state
        return state
    }

    /// A record's sequence number, zero-padded so that the names sort as the numbers do.
    private static func sequence(_ number: Int) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, 10 - digits.count)) + digits
    }

    /// Reads the records and makes sure the fingerprint key exists, before the first batch: what the
    /// synchronous calls of a batch need.
    func prepareForWrites() async throws(KeychainError) {
        _ = try await load()
        _ = try await fingerprintKey(create: true)
    }

    /// The keyed fingerprint of what a target item holds: kind, value, and for credentials the username.
    /// - Parameter create: whether to create the fingerprint key when there is none (a plan never does: without
    ///   a key there is no entry to compare with).
    func fingerprint(of value: SourceValue, kind: TargetKind, create: Bool) async throws(KeychainError) -> String? {
        guard let key = try await fingerprintKey(create: create) else { return nil }
        return Self.fingerprint(of: value, kind: kind, key: key)
    }

    /// The fingerprint under the key ``prepareForWrites()`` made sure of; nil for a sealed value.
    func preparedFingerprint(of value: SourceValue, kind: TargetKind) throws(KeychainError) -> String? {
        guard let key else {
            throw KeychainError(.INTERNAL, "the migration's ledger was not prepared for writes")
        }
        return Self.fingerprint(of: value, kind: kind, key: key)
    }

    private static func fingerprint(of value: SourceValue, kind: TargetKind, key: Data) -> String? {
        var message = Data(kind.rawValue.utf8)
        switch value {
        case .value(let data):
            message.append(0)
            message.append(data)
        case .credentials(let username, let password):
            message.append(0)
            message.append(contentsOf: username.utf8)
            message.append(0)
            message.append(contentsOf: password.utf8)
        case .sealed:
            return nil
        }
        defer { message.resetBytes(in: 0..<message.count) }
        return Data(Crypto.hmacSHA256(message, key: key)).base64EncodedString()
    }

    private func fingerprintKey(create: Bool) async throws(KeychainError) -> Data? {
        if let key { return key }
        let name = "key:\(id)"
        if let existing = try await record(name), existing.count == Crypto.hmacSHA256KeyLength {
            key = existing
            return existing
        }
        guard create else { return nil }
        let key = Crypto.randomBytes(Crypto.hmacSHA256KeyLength)
        try await keychain.setBytes(name, Data(key), Self.protection)
        self.key = Data(key)
        return Data(key)
    }

    // MARK: Journal

    /// The source items parked to make room for one target item (names only: no value is ever copied).
    struct JournalRecord: Codable {
        var parked: [ParkedItem]
    }

    func journal(_ record: JournalRecord, for target: TargetItem) throws(KeychainError) {
        guard let data = try? JSONEncoder().encode(record) else {
            throw KeychainError(.INTERNAL, "the migration journal could not be encoded")
        }
        try keychain.setBytesSynchronously(journalKey(target), data, Self.protection)
    }

    /// Every journal record of this migration, with its record key and the digest of its target. An item under a
    /// journal key that is not of a record's form (not the package's own item, not protected as the ledger
    /// protects its records, or a key without a digest after the prefix) is another writer's: it names nothing a
    /// run could put back, it is left where it is, and the run goes on.
    /// - Throws: `INTERNAL` for an item of a record's form whose value doesn't decode: a damaged record names
    ///   parked source items that only it can put back, and a later journal write for its target would replace
    ///   it, so it must not be passed over. (A value the store can't open throws too.)
    func journalRecords() async throws(KeychainError) -> [(key: String, digest: String, record: JournalRecord)] {
        var records: [(String, String, JournalRecord)] = []
        // A digest is 32 lowercase hex digits: anything else after the prefix is another migration's record, one
        // whose id is this one's followed by ':' and more.
        for (key, digest) in try await recordKeys("journal") where Self.isDigest(digest) {
            guard let data = try await record(key) else { continue }
            guard let record = try? JSONDecoder().decode(JournalRecord.self, from: data) else {
                throw KeychainError(.INTERNAL, "the migration journal record '\(key)' is damaged")
            }
            records.append((key, String(digest), record))
        }
        return records
    }

    /// The keys of this migration's records of one kind (`<kind>:<id>:<rest>`), each with its rest. Byte for byte:
    /// `hasPrefix` compares by canonical equivalence, and would take the records of another migration whose id
    /// is the same text in other code points.
    private func recordKeys(_ kind: String) async throws(KeychainError) -> [(key: String, rest: Substring)] {
        let prefix = Array("\(kind):\(id):".utf8)
        return try await keychain.getAllKeys().compactMap { key in
            key.utf8.starts(with: prefix) ? (key, Substring(key.utf8.dropFirst(prefix.count))) : nil
        }
    }

    /// Whether the ledger holds the target of `digest` as written and read back.
    func isVerified(digest: String) async throws(KeychainError) -> Bool {
        try await load().entries[digest]?.state == .verified
    }

    func removeJournal(key: String) throws(KeychainError) { try keychain.removeItemSynchronously(key) }

    func removeJournal(for target: TargetItem) throws(KeychainError) {
        try keychain.removeItemSynchronously(journalKey(target))
    }

    // MARK: Keys

    /// `journal:<migration id>:<target digest>`.
    private func journalKey(_ target: TargetItem) -> String { Self.journalKey(id: id, digest: Self.digest(target)) }

    /// The key of a journal record: the ledger's longest key, which bounds ``MigrationID/maxLength``.
    static func journalKey(id: String, digest: String) -> String { "journal:\(id):\(digest)" }

    /// Whether `text` is what ``digest(_:)`` makes: 32 lowercase hex digits.
    static func isDigest(_ text: Substring) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// A short digest of where a target item lives (service, access group, key), as a record name.
    /// The bytes of a ``digest(_:)`` (written as twice as many hex digits).
    static let digestBytes = 16

    static func digest(_ target: TargetItem) -> String {
        var text = Data(target.service.utf8)
        text.append(0)
        text.append(contentsOf: (target.accessGroup ?? "").utf8)
        text.append(0)
        text.append(contentsOf: target.key.utf8)
        return Hex.lowercase(Crypto.blake2b(text, length: digestBytes))
    }
}
