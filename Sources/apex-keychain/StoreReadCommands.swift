import ApexKeychain
import ApexKeychainStore
import ApexMigration
import Foundation

/// `apex-keychain store list`: the keys of a service, or of every service.
struct StoreListCommand: RunnableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "list",
            abstract: "List the keys of a service.",
            discussion: """
                Prints the keys of the service, one per line, sorted. With --all-services, prints the keys of \
                every service as 'SERVICE<TAB>KEY' lines, sorted by service, then key, and the items of an \
                access group other than the store's default (a migration keeps each item's group) as \
                'SERVICE<TAB>KEY<TAB>ACCESS-GROUP' lines after them. The migration's own records (service \
                'apex-keychain.migration') are listed too, and a note on stderr says what they are: an item there \
                that the migration did not write is in sight. When the service has no item, stderr says so, and \
                how many items the other services and access groups hold. Never prompts.
                """,
            options: StoreOptions.definitions + [Self.allServices])
    }

    /// `--all-services`.
    static let allServices = OptionDefinition.flag(
        "all-services", help: "List the keys of every service in the store, the migration's records too.")

    /// Which store, how to unlock it, which service.
    let store: StoreOptions
    /// Whether to list every service's keys.
    let allServices: Bool

    init(_ values: ParsedValues) throws(CLIError) {
        store = try StoreOptions(values)
        allServices = try values.flag(Self.allServices)
        if allServices, store.service != nil {
            throw .usage("'--all-services' and '--service' can't be used together")
        }
        if allServices, store.accessGroup != nil {
            throw .usage("'--all-services' and '--access-group' can't be used together")
        }
    }

    func run() async throws(CLIError) {
        let opened = try store.open()
        guard allServices else {
            let keys = try await opened.perform { keychain throws(KeychainError) in try await keychain.getAllKeys() }
            try Console.write(keys.map { DisplayText.escaped($0) + "\n" }.joined())
            if keys.isEmpty { try await sayWhereItemsAre(opened) }
            return
        }
        let places = try await opened.keysByPlace(includingLedger: true)
        var lines = ""
        // The default group's services first, then the other groups' (a third column names the group).
        for place in places where place.isDefaultGroup {
            for key in place.keys { lines += "\(DisplayText.escaped(place.service))\t\(DisplayText.escaped(key))\n" }
        }
        for place in places where !place.isDefaultGroup {
            for key in place.keys {
                lines +=
                    "\(DisplayText.escaped(place.service))\t\(DisplayText.escaped(key))\t\(DisplayText.escaped(place.accessGroup))\n"
            }
        }
        try Console.write(lines)
        if places.isEmpty { Console.writeError("no items in \(DisplayText.escaped(opened.path))\n") }
        let ledger = places.filter { Migration.isReservedService($0.service) }.reduce(0) {
            $0 + $1.keys.count
        }
        if ledger > 0 {
            Console.writeError(
                "note: service '\(Migration.ledgerService)' holds the migration's records "
                    + "(\(Console.counted(ledger, "item")); only 'migrate' and an app's start-up migration write there)\n"
            )
        }
    }

    /// On stderr: that the service has no item, and how many the other services and access groups hold.
    private func sayWhereItemsAre(_ opened: OpenedStore) async throws(CLIError) {
        let (service, group) = (opened.keychain.service, opened.keychain.accessGroup)
        let others = try await opened.keysByPlace().filter {
            !(ExactText.equal($0.service, service) && ExactText.equal($0.accessGroup, group))
        }
        var note = "no items in \(opened.place(service, group))"
        if !others.isEmpty {
            let count = others.reduce(0) { $0 + $1.keys.count }
            let items = Console.counted(count, "item")
            let elsewhere =
                others.allSatisfy(\.isDefaultGroup)
                ? Console.counted(others.count, "other service")
                : Console.counted(
                    others.count, "other service or access group", plural: "other services or access groups")
            note += "; \(items) in \(elsewhere): list \(count == 1 ? "it" : "them") with --all-services"
        }
        Console.writeError(DisplayText.escaped(note) + "\n")
    }
}

/// A service of an access group, and the keys of the package's items there.
struct KeysOfPlace {
    let service: String
    let accessGroup: String
    /// Whether ``accessGroup`` is the device's default group.
    let isDefaultGroup: Bool
    let keys: [String]
}

extension OpenedStore {
    /// The keys of every service and access group that hold the package's items, sorted by service, then group;
    /// the migration's records only when `includingLedger`. The places come from the store's own items; each
    /// place's keys come from its keychain, which leaves other libraries' items out and settles a write left
    /// staged by a crash.
    func keysByPlace(includingLedger: Bool = false) async throws(CLIError) -> [KeysOfPlace] {
        let items: [ItemAttributes]
        do throws(KeychainDatabaseError) {
            items = try database.attributes(matching: ItemQuery(itemClass: .genericPassword, creator: apexCreator))
        } catch {
            throw ErrorMapping.database(error, store: path)
        }
        // Byte for byte, as the store compares names (Strings compare by canonical equivalence).
        var seen = Set<ExactName>()
        var places: [(service: String, group: String)] = []
        for item in items where includingLedger || !Migration.isReservedService(item.service) {
            if seen.insert(ExactName(item.service, item.accessGroup)).inserted {
                places.append((item.service, item.accessGroup))
            }
        }
        places.sort {
            !ExactText.equal($0.service, $1.service)
                ? $0.service.utf16.lexicographicallyPrecedes($1.service.utf16)
                : $0.group.utf16.lexicographicallyPrecedes($1.group.utf16)
        }
        var result: [KeysOfPlace] = []
        for place in places {
            let keys = try await perform { _ throws(KeychainError) in
                try await Keychain(
                    KeychainOptions(service: place.service, accessGroup: place.group), database: database,
                    device: device
                ).getAllKeys()
            }
            if !keys.isEmpty {
                result.append(
                    KeysOfPlace(
                        service: place.service, accessGroup: place.group,
                        isDefaultGroup: isDefaultGroup(place.group), keys: keys))
            }
        }
        return result
    }
}

/// `apex-keychain store get`: the one command that prints a secret, to stdout only.
struct StoreGetCommand: RunnableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "get",
            abstract: "Write an item's value to stdout.",
            discussion: """
                Writes the value exactly as it was stored, with no newline added. For credentials (a key \
                'credentials' or 'credentials:<server>' written with --username), writes the password. This is \
                the only command that prints a secret. Prompts for the passcode when the item's access control \
                asks for it.
                """,
            arguments: [keyArgument],
            options: StoreOptions.definitions)
    }

    /// Which store, how to unlock it, which service.
    let store: StoreOptions
    /// The item's key.
    let key: String

    init(_ values: ParsedValues) throws(CLIError) {
        store = try StoreOptions(values)
        key = try values.argument(keyArgument) ?? ""
    }

    func run() async throws(CLIError) {
        let opened = try store.open()
        let key = key
        // A credentials item's value is its password, so reading the bytes prints the password; unlike
        // getCredentials, it also prints an item under a credentials key that was stored with --bytes.
        let value = try await opened.perform { keychain throws(KeychainError) in try await keychain.getBytes(key) }
        guard let value else { throw opened.missingItem(key) }
        try Console.write(value)
    }
}

/// `apex-keychain store info`: an item's attributes, without its value.
struct StoreInfoCommand: RunnableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "info",
            abstract: "Show an item's attributes, without its value.",
            discussion: """
                Shows what can be known of the item without reading its value, so it never prompts: key, label \
                (the username of credentials; '(none)' when there is no label, '""' when it is empty), \
                accessible, accessControl, synchronizable, created and modified (ISO 8601, UTC) and, on the \
                Android profiles, securityLevel. --format json prints the same as a JSON object with sorted \
                keys; its dates are milliseconds since 1970, and a missing label is left out.
                """,
            arguments: [keyArgument],
            options: StoreOptions.definitions + [Self.format])
    }

    /// `--format <format>`: as `inspect`'s.
    static let format = InspectCommand.format

    /// Which store, how to unlock it, which service.
    let store: StoreOptions
    /// The item's key.
    let key: String
    /// Whether to print JSON rather than text.
    let json: Bool

    init(_ values: ParsedValues) throws(CLIError) {
        store = try StoreOptions(values)
        key = try values.argument(keyArgument) ?? ""
        json = try values.enumeration(Self.format, InspectCommand.Format.self) == .json
    }

    func run() async throws(CLIError) {
        let opened = try store.open()
        let key = key
        let info = try await opened.perform { keychain throws(KeychainError) in try await keychain.getItemInfo(key) }
        guard let info else { throw opened.missingItem(key) }
        try Console.write(json ? try ItemInfoFormat.json(info) : ItemInfoFormat.text(info))
    }
}
