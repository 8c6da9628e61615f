import ApexDumps
import ApexKeychain
import ApexKeychainStore
import ExpoSecureStoreImporter
import Foundation
import ReactNativeEncryptedStorageImporter
import SampleDumps
import Testing

@testable import ApexMigration

/// What the batched crash tests run and look at: a store, the `store-writer` child that migrates into it in
/// small batches and kills itself at a chosen event, and a snapshot of everything the store holds.
enum BatchedMigration {
    /// Items in the generated dump, and items per batch: ten batches.
    static let items = 60
    static let batch = 6

    /// Where the migration's items come from.
    enum Source: String, Sendable {
        /// A 60-item expo-secure-store XML plist.
        case dump
        /// The same items, expo's sample and react-native-encrypted-storage's iOS sample items (as the same app's),
        /// as those libraries' own items in the store itself, removed once migrated.
        case store
    }

    /// The device the child uses (expo's items carry its app's access group).
    static func device() -> SimulatedDevice {
        SimulatedDevice(bundleIdentifier: "com.example.expoapp", teamIdentifier: "A1B2C3D4E5")
    }

    /// A fresh store in `sandbox` (device profile `ios`), holding the source items when `source` is `.store`,
    /// and the dump the items come from.
    static func prepare(_ source: Source, in sandbox: Sandbox) throws -> (store: URL, keyFile: URL, dump: String) {
        let file = try #require(try LargeSamples.files(items).first { $0.path == "expo-ios-\(items).plist" })
        let dump = try sandbox.write("expo.plist", file.data)
        let store = sandbox.url.appendingPathComponent("target.store")
        let keyFile = SQLiteKeychainDatabase.defaultKeyFile(for: store)
        let database = try SQLiteKeychainDatabase.create(at: store, key: .keyFile(keyFile), device: .ios)
        if source == .store {
            for record in try records(dump) + records(sample("expo-secure-store/ios/keychain.plist"))
                + encryptedStorageRecords()
            {
                guard case .data(let value) = record.value, let service = record.service?.text,
                    let account = record.account?.text, let group = record.accessGroup
                else { continue }
                try database.add(
                    KeychainItem(
                        attributes: ItemAttributes(
                            service: service, account: account, accessGroup: group, generic: record.generic?.bytes,
                            protectionDomain: try #require(record.protection.flatMap(ProtectionDomain.init(rawValue:))),
                            accessControl: record.accessControl?.flags ?? [], synchronizable: record.synchronizable),
                        value: value))
            }
        }
        return (store, keyFile, dump)
    }

    /// react-native-encrypted-storage's items of its iOS sample (no service), in the expo app's access group: one
    /// app that used both libraries.
    static func encryptedStorageRecords() throws -> [KeychainRecord] {
        try records(sample("react-native-encrypted-storage/ios/keychain.plist")).compactMap { record in
            guard record.service?.bytes.isEmpty ?? true else { return nil }
            var record = record
            record.service = .string("")
            record.accessGroup = device().defaultAccessGroup
            return record
        }
    }

    /// The importers the child and these helpers run.
    static let importers: [any Importer] = [ExpoSecureStoreImporter(), ReactNativeEncryptedStorageImporter()]

    private static func records(_ path: String) throws -> [KeychainRecord] {
        guard case .keychain(let records) = try DumpReader.read(path: path).content else { return [] }
        return records
    }

    /// Runs `store-writer --migrate` into the store; returns its status, how it ended, and its output.
    static func child(
        _ source: Source, store: URL, keyFile: URL, dump: String, killAt: Int?
    ) throws
        -> (reason: Process.TerminationReason, status: Int32, output: String, errors: String)
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("store-writer")
        if !FileManager.default.isExecutableFile(atPath: process.executableURL!.path) {
            process.executableURL = CLIBinary.url?.deletingLastPathComponent().appendingPathComponent("store-writer")
        }
        process.arguments =
            [
                "--store", store.path, "--key-file", keyFile.path, "--migrate", source == .dump ? dump : "store",
                "--batch", String(batch),
            ] + (killAt.map { ["--kill-at", String($0)] } ?? [])
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationReason, process.terminationStatus, String(decoding: out, as: UTF8.self),
            String(decoding: err, as: UTF8.self)
        )
    }

    /// A migration of `source` into the open store, as the child makes it but in one batch per 512 items.
    static func migration(_ source: Source, _ database: SQLiteKeychainDatabase, dump: String) throws -> Migration {
        let device = device()
        let from: MigrationSource =
            source == .dump ? .dumps(try DumpReader.readAll(paths: [dump])) : .database(database, device: device)
        return Migration(
            id: .forTests, importers: importers, source: from,
            target: MigrationTarget(database: database, device: device),
            policy: MigrationPolicy(removeSource: source == .store))
    }

    /// The items a complete migration writes, by target place: their target and source value.
    static func expected(dump: String) throws -> [String: (target: TargetItem, value: SourceValue)] {
        try expected(dumps: DumpReader.readAll(paths: [dump]))
    }

    /// The items a complete migration of `dumps` writes, by target place.
    static func expected(dumps: [Dump]) throws -> [String: (target: TargetItem, value: SourceValue)] {
        let (items, _) = try Migration.collect(importers: importers, dumps: dumps, options: ImportOptions())
        var expected: [String: (TargetItem, SourceValue)] = [:]
        for item in items where item.verdict == .migrate {
            guard let target = item.target else { continue }
            expected[place(target.service, target.key)] = (target, item.value)
        }
        return expected
    }

    static func place(_ service: String, _ key: String) -> String { "\(service)/\(key)" }
}

/// Everything a store holds, as the crash tests compare it.
struct StoreSnapshot: Equatable {
    /// The package's items outside the ledger, by service and account.
    var items: [String: KeychainItem] = [:]
    /// Other libraries' items, by service and account (a parked one under its parking account).
    var foreign: [String: KeychainItem] = [:]
    /// The ledger's entries, merged in record order, by target digest.
    var entries: [String: Ledger.Entry] = [:]
    /// The ledger's other records: journal, pending and completion marker names.
    var records: Set<String> = []

    init(_ database: SQLiteKeychainDatabase) throws {
        var entryRecords: [(String, Data)] = []
        for attributes in try database.attributes(matching: ItemQuery()) {
            let item = KeychainItem(attributes: attributes, value: try database.value(for: attributes.primaryKey))
            let name = BatchedMigration.place(attributes.service, attributes.account)
            if !attributes.isApexItem {
                foreign[name] = item
            } else if attributes.service == Ledger.service {
                if attributes.account.hasPrefix("entries:") {
                    entryRecords.append((attributes.account, item.value))
                } else if !attributes.account.hasPrefix("key:") {
                    records.insert(attributes.account)
                }
            } else {
                items[name] = item
            }
        }
        for (_, data) in entryRecords.sorted(by: { $0.0 < $1.0 }) {
            entries.merge(try JSONDecoder().decode([String: Ledger.Entry].self, from: data)) { _, later in later }
        }
    }

    /// What differs from `other`, by name (item, foreign item, entry, record), leaving out the entries'
    /// fingerprints (each store has its own fingerprint key).
    func differences(from other: StoreSnapshot) -> [String] {
        func differing<V: Equatable>(_ mine: [String: V], _ theirs: [String: V]) -> [String] {
            Set(mine.keys).union(theirs.keys).filter { mine[$0] != theirs[$0] }.sorted()
        }
        var entries = entries
        var others = other.entries
        for key in entries.keys { entries[key]?.fingerprint = "" }
        for key in others.keys { others[key]?.fingerprint = "" }
        return differing(items, other.items) + differing(foreign, other.foreign).map { "foreign \($0)" }
            + differing(entries, others).map { "entry \($0)" } + records.symmetricDifference(other.records).sorted()
    }
}

extension MigrationID {
    /// The id of the tests' migrations: the `migrate` command's when it is given none, whose ledger the tests read
    /// as `Ledger(target:id: "default")`.
    static let forTests = MigrationID("default")!
}
