import ApexDumps
import ApexKeychain
import ApexKeychainStore
import ApexMigration
import ApexTestSupport
import Foundation
import Testing

/// A minimal importer for the migration's own tests: every generic-password record becomes a string item of
/// the same service and account, protected as the record's `pdmn` and access-control flags say. Records whose
/// account starts with `skip-` are skipped, `sealed-` sealed, `blocked-` blocked.
struct PlainImporter: Importer {
    /// The access control every target gets, whatever the record's: a source without access control under its
    /// own target key is then moved aside (parked) instead of turned into the target in place.
    var targetAccessControl: AccessControl?

    var library: SourceLibrary { .expoSecureStore }

    func importItems(from dumps: [Dump], options: ImportOptions) throws(ImportError) -> [SourceItem] {
        var items: [SourceItem] = []
        for dump in dumps {
            guard case .keychain(let records) = dump.content else { continue }
            for record in records where record.itemClass == "genp" {
                guard let service = record.service?.text, let account = record.account?.text,
                    record.creator != apexCreator
                else { continue }
                let accessible =
                    record.protection.flatMap(ProtectionDomain.init(rawValue:))?.accessible ?? .whenUnlocked
                let control = targetAccessControl ?? record.accessControl?.flags.accessControl ?? AccessControl.none
                var value = SourceValue.sealed("no value in the dump")
                if case .data(let data) = record.value { value = .value(data) }
                var verdict = SourceVerdict.migrate
                if account.hasPrefix("skip-") { verdict = .skipped("filtered") }
                if account.hasPrefix("blocked-") { verdict = .blocked("an and-combination") }
                if account.hasPrefix("sealed-") { value = .sealed("Android Keystore key") }
                items.append(
                    SourceItem(
                        library: library, platform: .ios,
                        origin: SourceOrigin(path: dump.path, format: dump.format, location: record.location),
                        source: SourceDescription(itemClass: "genp", service: service, account: account),
                        value: value,
                        target: TargetItem(
                            service: options.serviceMap[service] ?? service, key: account, kind: .string,
                            options: SetOptions(accessible: accessible, accessControl: control)),
                        verdict: verdict))
            }
        }
        return items
    }
}

/// One dump of plain records.
func dump(
    _ records: [(service: String, account: String, value: String, pdmn: String, flags: AccessControlFlags)],
    path: String = "dump.plist"
) -> Dump {
    keychainDump(
        records.enumerated().map { index, r in
            genericPasswordRecord(
                service: r.service, account: r.account, value: r.value, protection: r.pdmn,
                accessControl: r.flags.isEmpty ? nil : AccessControlDescription(flags: r.flags, raw: "test"),
                location: "item \(index + 1)")
        }, path: path)
}

/// A target on a fresh in-memory database and a simulated iPhone.
func memoryTarget(device: SimulatedDevice = SimulatedDevice()) -> MigrationTarget {
    MigrationTarget(database: InMemoryKeychainDatabase(), device: device)
}

extension MigrationPlan {
    /// The action of each item, by account.
    var actionsByAccount: [String: MigrationAction] {
        Dictionary(uniqueKeysWithValues: actions.map { ($0.item.source.account ?? "", $0.action) })
    }
}

extension MigrationID {
    /// The id of the tests' migrations: the `migrate` command's when it is given none, whose ledger the tests read
    /// as `Ledger(target:id: "default")`.
    static let forTests = MigrationID("default")!
}
