import ApexDumpModel
import ApexKeychain
import Foundation

/// Other libraries' items in a keychain database, as raw records the importers read: the on-device case,
/// where the source and the target share one keychain.
///
/// It reads them with the fewest round trips (`apple-secitem.md` §8.2): one listing with values per class
/// (``KeychainDatabase/itemsWithValues(matching:)``, which on a device is the attributes listing and the data listing
/// that skips items needing authentication), never one read per item for items without access control. Items
/// with access control are read only as ``MigrationPolicy/protectedSourceItems`` allows: through one prompt for the
/// run, whose context opens each of them.
struct DatabaseSource {
    static let path = "keychain database"

    /// The database the items are in.
    let database: any KeychainDatabase
    /// The records, and for each record's location the primary key of the item it came from.
    var dump: Dump
    var keys: [String: ItemAttributes.PrimaryKey]
    var items: [String: ItemAttributes]
    /// Every item the listings found, the package's own included, by class: what the plan and the writes need to
    /// know of the keychain without asking it again (on the device, the target is this very database).
    var listed: [ItemAttributes]
    /// The other libraries' items the listings found, by primary key.
    var listedForeign: [ItemAttributes.PrimaryKey: ItemAttributes] = [:]
    /// The values the listings read of other libraries' items, by primary key: what an item turned into the
    /// package's in place (``Keychain/convert(_:to:_:_:)``) gets back when its target is not verified.
    var listedValues: [ItemAttributes.PrimaryKey: Data] = [:]
    /// The other libraries' items with access control, by primary key (the keychain may not disclose the
    /// constraints, but it says that a read needs the user): such an item can't be moved aside or changed
    /// without the user, so it is never replaced in place.
    var withAccessControl: Set<ItemAttributes.PrimaryKey> = []
    /// The items with access control whose value this run did not read, by location, with why and what the app can
    /// do: the plan leaves them `blocked` and pending.
    var unread: [String: Unread] = [:]
    /// The contexts the run's prompts left, with the access control each was evaluated for: the read-back of a
    /// target with access control reuses them instead of prompting again.
    var authentications: [(accessControl: AccessControl, context: any AuthenticationContext)] = []

    /// Why a protected item's value was not read.
    struct Unread {
        var cause: MigrationReason
        var reason: String
        /// The reason an importer blocks the item with, when the record says its protection is unknown (an access
        /// control whose constraints the keychain does not disclose): the plan replaces it with ``reason``.
        var importerReason: String?
    }

    /// The classes the listings read, one listing each.
    static let classes: [ItemClass] = [.genericPassword, .internetPassword]

    /// Reads every item without the package's creator mark.
    /// - Parameters:
    ///   - valuesOf: when given, only these items' values are kept (a run that retries what an earlier one left
    ///     pending); the others are records without a value, which the importers see as they are and the plan
    ///     leaves out. No prompt is shown for the others.
    ///   - protected: what to do with the items that have access control.
    /// - Throws: ``MigrationError/tryLater`` when the device is locked and an item's class can't be read now.
    init(
        database: any KeychainDatabase, device: any Device, valuesOf: Set<ItemAttributes.PrimaryKey>? = nil,
        protected: MigrationPolicy.ProtectedSourceItems = .leavePending
    ) async throws(MigrationError) {
        self.database = database
        let state = device.state()
        let listed: [ListedItem]
        do {
            listed = try Self.list(database, valuesOf: valuesOf)
        } catch  where error.status == .interactionNotAllowed {
            throw MigrationError.tryLater("the source items can't be read now: \(error.message)")
        } catch {
            throw MigrationError.source("\(Self.path): \(error)")
        }
        self.listed = listed.map(\.attributes)
        var records: [KeychainRecord] = []
        var keys: [String: ItemAttributes.PrimaryKey] = [:]
        var items: [String: ItemAttributes] = [:]
        var toOpen: [(index: Int, attributes: ItemAttributes, accessControl: AccessControl)] = []
        var index = 0
        for item in listed where !item.attributes.isApexItem {
            let a = item.attributes
            if case .gone = item.value { continue }
            listedForeign[a.primaryKey] = a
            if !a.accessControl.isEmpty { withAccessControl.insert(a.primaryKey) }
            if case .needsAuthentication = item.value { withAccessControl.insert(a.primaryKey) }
            index += 1
            let location = "item \(index)"
            keys[location] = a.primaryKey
            items[location] = a
            if let valuesOf, !valuesOf.contains(a.primaryKey) {
                records.append(Self.record(a, location: location, value: .absent))
                continue
            }
            let alwaysReadable = a.protectionDomain == .dk || a.protectionDomain == .dku
            let needsUnlock = a.protectionDomain == .ak || a.protectionDomain == .aku || a.protectionDomain == .akpu
            if !alwaysReadable, !state.unlockedSinceBoot || (state.isLocked && needsUnlock) {
                throw MigrationError.tryLater("the device is locked, and the source items can't be read now")
            }
            switch item.value {
            case .data(let data):
                records.append(Self.record(a, location: location, value: .data(data)))
                listedValues[a.primaryKey] = data
            case .failed(let error):
                records.append(
                    Self.record(
                        a, location: location, value: .damaged("the value can't be read: \(error.status.rawValue)")))
            case .gone:
                continue
            case .needsAuthentication:
                // Empty flags on an item that needs authentication: it has access control, and the keychain does
                // not disclose its constraints. Never taken for an item without any.
                let undisclosed = a.accessControl.isEmpty
                var declared: AccessControl?
                // A declared `.none` is no declaration: the keychain said the item has access control, and the new
                // item is never protected weaker.
                if undisclosed, case .readWithPrompt(_, let accessControl?) = protected, accessControl != .none {
                    declared = accessControl
                }
                var record = Self.record(a, location: location, value: .absent, accessControl: declared?.flags)
                var importerReason: String?
                if undisclosed, declared == nil {
                    record.extra["accc"] = "undisclosed"
                    record.unreadable["accc"] = Self.undisclosedNote
                    importerReason = record.unreadableProtection
                }
                records.append(record)
                let control = declared ?? (undisclosed ? nil : a.accessControl.accessControl)
                switch protected {
                case .readWithPrompt where control != nil:
                    toOpen.append((records.count - 1, a, control ?? .none))
                case .readWithPrompt:
                    let why =
                        undisclosed
                        ? "its access control's constraints are not disclosed by the keychain, and a new item is never protected weaker: to migrate it, name the access control the app gave it in MigrationPolicy.protectedSourceItems (.readWithPrompt(prompt, accessControl:))"
                        : "its access control has no equivalent in the package"
                    unread[location] = Unread(
                        cause: .needsInput, reason: "the item has access control: \(why)",
                        importerReason: importerReason)
                case .leavePending:
                    unread[location] = Unread(
                        cause: .needsPrompt,
                        reason:
                            "the item has access control, and its value is read only through a prompt, which this run was not allowed to show: run the migration with MigrationPolicy.protectedSourceItems = .readWithPrompt(…) when the app can show one (one prompt opens every such item)"
                            + (undisclosed ? "; \(Self.undisclosedNote), so name the access control too" : ""),
                        importerReason: importerReason)
                }
            }
        }
        if case .readWithPrompt(let prompt, _) = protected, !toOpen.isEmpty {
            let opened = await Self.open(toOpen.map { ($0.attributes, $0.accessControl) }, database, device, prompt)
            authentications = opened.authentications
            for (entry, result) in zip(toOpen, opened.results) {
                let location = records[entry.index].location
                switch result {
                case .success(let data):
                    records[entry.index].value = .data(data)
                case .failure(let failure):
                    switch failure {
                    case .gone:
                        unread[location] = Unread(cause: .skipped, reason: "the item went while this run read it")
                    case .refused(let code, let why):
                        unread[location] = Unread(cause: .keychain(code), reason: "\(code.rawValue): \(why)")
                    case .damaged(let why):
                        records[entry.index].value = .damaged(why)
                    }
                }
            }
        }
        dump = Dump(path: Self.path, format: .keychainDatabase, content: .keychain(records))
        self.keys = keys
        self.items = items
    }

    /// Every item of the database, one listing per class. A first run lists the values with them
    /// (``KeychainDatabase/itemsWithValues(matching:)``); a run that retries a few items (`valuesOf`) lists the
    /// attributes and reads the values of those items only: the others' are not needed. There an item whose
    /// read the keychain refuses without a prompt (`interactionNotAllowed`, on a device whose state lets its class
    /// be read: the caller checks) is one with access control: it is listed as needing authentication.
    static func list(
        _ database: any KeychainDatabase, valuesOf: Set<ItemAttributes.PrimaryKey>?
    ) throws(KeychainDatabaseError) -> [ListedItem] {
        var listed: [ListedItem] = []
        for itemClass in classes {
            let query = ItemQuery(itemClass: itemClass)
            guard let valuesOf else {
                listed += try database.itemsWithValues(matching: query)
                continue
            }
            for a in try database.attributes(matching: query) {
                guard !a.isApexItem, valuesOf.contains(a.primaryKey) else {
                    listed.append(ListedItem(attributes: a, value: .data(Data())))
                    continue
                }
                guard a.accessControl.isEmpty else {
                    listed.append(ListedItem(attributes: a, value: .needsAuthentication))
                    continue
                }
                do {
                    listed.append(ListedItem(attributes: a, value: .data(try database.value(for: a.primaryKey))))
                } catch  where error.status == .itemNotFound {
                    listed.append(ListedItem(attributes: a, value: .gone))
                } catch  where error.status == .interactionNotAllowed {
                    listed.append(ListedItem(attributes: a, value: .needsAuthentication))
                } catch {
                    listed.append(ListedItem(attributes: a, value: .failed(error)))
                }
            }
        }
        return listed
    }

    /// What the record says of an access control whose constraints the keychain does not disclose.
    static let undisclosedNote =
        "the item has access control, and the keychain does not disclose its constraints (another library's item on iOS)"

    /// The record of item `a`, as the importers read it; `accessControl`, when given, stands for the item's flags.
    private static func record(
        _ a: ItemAttributes, location: String, value: DumpValue, accessControl: AccessControlFlags? = nil
    ) -> KeychainRecord {
        let flags = accessControl ?? a.accessControl
        return KeychainRecord(
            location: location, itemClass: a.itemClass.rawValue, service: .string(a.service),
            account: .string(a.account), generic: a.generic.map(DumpBytes.data), value: value,
            protection: a.protectionDomain.rawValue, accessGroup: a.accessGroup, label: a.label,
            creator: a.creator, synchronizable: a.synchronizable, createdAt: a.createdAt,
            modifiedAt: a.modifiedAt, server: a.server, protocolCode: a.protocolCode,
            port: a.port == 0 ? nil : a.port, path: a.path, authenticationType: a.authenticationType,
            securityDomain: a.securityDomain,
            accessControl: flags.isEmpty
                ? nil
                : AccessControlDescription(
                    flags: flags, protection: a.protectionDomain.rawValue, raw: "flags:\(flags.rawValue)"))
    }
}
