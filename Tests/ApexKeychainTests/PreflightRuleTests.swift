import ApexKeychain
import Foundation
import Testing

/// The rule a migration's dry run rests on ("the plan is what the run does"): `checkWrite` throws exactly when
/// the write it answers for would, with the same error. Every case builds two worlds alike, a fresh
/// `InMemoryKeychainDatabase` and a fresh `SimulatedDevice` each, asks one whether the write would pass and does
/// the write in the other, and compares. A database fault is left out: it happens only while writing, and
/// `checkWrite` writes nothing (C1).
@Suite("checkWrite answers what the write does")
struct PreflightRuleTests {
    /// A device the tests can make with the public ``SimulatedDevice``, in a state it can be put in.
    struct Profile: CustomTestStringConvertible, Sendable {
        let testDescription: String
        let make: @Sendable () -> SimulatedDevice

        /// Every sensor × security combination on a device that is unlocked, then the states and app settings
        /// that change a write on one of them: locked, before the first unlock, no usage description, the install
        /// check with and without clearOnReinstall and a marker that can't be read or written.
        static let all: [Profile] = {
            let sensors: [(String, Platform, SimulatedDevice.Biometry?, Bool)] = [
                ("iOS Face ID", .iOS(major: 18), .faceID, false),
                ("iOS Touch ID", .iOS(major: 18), .touchID, false),
                ("iOS no sensor", .iOS(major: 18), nil, false),
                ("Android 29 fingerprint", .android(apiLevel: 29), .fingerprint, false),
                ("Android 34 face", .android(apiLevel: 34), .face, false),
                ("Android 34 fingerprint, StrongBox", .android(apiLevel: 34), .fingerprint, true),
                ("Linux", .linux, nil, false),
            ]
            let securities: [(String, Bool, Bool)] = [
                ("passcode, enrolled", true, true), ("passcode, nothing enrolled", true, false),
                ("no passcode", false, false),
            ]
            var profiles: [Profile] = []
            for (name, platform, biometry, strongBox) in sensors {
                for (security, passcode, enrolled) in securities {
                    profiles.append(
                        Profile("\(name), \(security)") {
                            SimulatedDevice(
                                platform: platform, biometry: biometry, passcodeSet: passcode,
                                biometricsEnrolled: enrolled, hasStrongBox: strongBox)
                        })
                }
                profiles.append(
                    Profile("\(name), locked") {
                        SimulatedDevice(platform: platform, biometry: biometry, hasStrongBox: strongBox, locked: true)
                    })
            }
            profiles += [
                Profile("iOS, before the first unlock") { SimulatedDevice(locked: true, unlockedSinceBoot: false) },
                Profile("Android, before the first unlock") {
                    SimulatedDevice(platform: .android(apiLevel: 34), locked: true, unlockedSinceBoot: false)
                },
                Profile("iOS Face ID, no NSFaceIDUsageDescription") {
                    SimulatedDevice(hasFaceIDUsageDescription: false)
                },
                Profile("iOS, clearOnReinstall") { SimulatedDevice(clearOnReinstall: true) },
                Profile("iOS, clearOnReinstall, before the first unlock") {
                    SimulatedDevice(locked: true, unlockedSinceBoot: false, clearOnReinstall: true)
                },
            ]
            for failure in [SimulatedDevice.InstallMarkerFailure.reading, .writing] {
                for clearing in [false, true] {
                    profiles.append(
                        Profile("iOS, install marker can't be \(failure)\(clearing ? ", clearOnReinstall" : "")") {
                            let device = SimulatedDevice(clearOnReinstall: clearing)
                            device.failInstallMarker(failure)
                            return device
                        })
                }
            }
            return profiles
        }()

        init(_ name: String, _ make: @escaping @Sendable () -> SimulatedDevice) {
            testDescription = name
            self.make = make
        }
    }

    /// What holds the key before the write.
    enum Holder: CaseIterable {
        case nothing
        /// The package's item.
        case own
        /// The package's item with access control: a write over it never prompts.
        case ownProtected
        /// The package's item whose metadata is damaged: a write replaces it without reading it.
        case ownDamaged
        /// The package's item, locked away by the database (its replace fails with `interactionNotAllowed`).
        case ownLockedAway
        /// Another library's item (no creator mark).
        case foreign
        /// Another library's item under the staging account, which only the package's items count in.
        case foreignOnStagingAccount
        /// A staged write interrupted after the old item went: the staging account alone.
        case stagedAlone
        /// An abandoned staged write beside the item.
        case stagedBesideOwn
    }

    /// The public writes that go through the write path, each with the key and options `checkWrite` is asked.
    enum Call: CaseIterable {
        case setItem, setBytes, setCredentials

        var key: String { self == .setCredentials ? "credentials" : "k" }
    }

    /// Every accessible × every access control (`none` included), plainly (true); and each with the other
    /// options that change a write (false): authValidity, synchronizable, a StrongBox that must be there.
    static let requests: [(SetOptions, plain: Bool)] = Accessible.allCases.flatMap { accessible in
        AccessControl.allCases.flatMap { accessControl in
            let plain = SetOptions(accessible: accessible, accessControl: accessControl)
            var timed = plain
            timed.authValidity = 60
            var synced = plain
            synced.synchronizable = true
            var strongBox = plain
            strongBox.android = AndroidOptions(keyStorage: .strongboxRequired)
            return [(plain, true), (timed, false), (synced, false), (strongBox, false)]
        }
    }

    /// The options `checkWrite` is asked with for `call`: a credentials write's label is its username.
    static func checked(_ set: SetOptions, for call: Call) -> SetOptions {
        var set = set
        if call == .setCredentials { set.label = "user" }
        return set
    }

    static let service = "svc.preflight"

    /// The items of a database where `holder` holds `key`, written through a capable device of their own:
    /// made once, then copied into each fresh world.
    static func seeded(_ holder: Holder, key: String) async throws -> [KeychainItem] {
        let database = InMemoryKeychainDatabase()
        let device = SimulatedDevice()
        let staging = key + "\u{0}staged"
        if holder == .foreign || holder == .foreignOnStagingAccount {
            return [
                KeychainItem(
                    attributes: ItemAttributes(
                        service: service, account: holder == .foreign ? key : staging,
                        accessGroup: device.defaultAccessGroup, protectionDomain: .ck),
                    value: Data("foreign".utf8))
            ]
        }
        if holder == .nothing { return [] }
        let seeder = try Keychain(KeychainOptions(service: service), database: database, device: device)
        try await seeder.setItem(
            key, "old",
            SetOptions(accessControl: holder == .ownProtected ? AccessControl.biometryAny : AccessControl.none))
        var item = try #require(database.allItems().first)
        switch holder {
        case .ownDamaged: item.attributes.generic = Data("damaged".utf8)
        case .stagedAlone: item.attributes.account = staging
        case .stagedBesideOwn:
            var staged = item
            staged.attributes.account = staging
            return [item, staged]
        case .nothing, .own, .ownProtected, .ownLockedAway, .foreign, .foreignOnStagingAccount: break
        }
        return [item]
    }

    /// A fresh world: a database holding `items` (locked away for ``Holder/ownLockedAway``) and a fresh device of
    /// `profile`, with a keychain on both.
    static func world(
        _ profile: Profile, _ holder: Holder, _ items: [KeychainItem]
    ) throws -> (
        Keychain, SimulatedDevice
    ) {
        let database = InMemoryKeychainDatabase()
        for item in items {
            try database.add(item)
            if holder == .ownLockedAway { database.setLockedAway(item.attributes.primaryKey) }
        }
        let device = profile.make()
        return (try Keychain(KeychainOptions(service: service), database: database, device: device), device)
    }

    /// What a write of `request` through `call` throws in a fresh world, or nil.
    static func written(
        _ call: Call, _ request: SetOptions, _ profile: Profile, _ holder: Holder, _ items: [KeychainItem]
    ) async throws -> KeychainError? {
        let (keychain, _) = try world(profile, holder, items)
        return await thrown {
            switch call {
            case .setItem: try await keychain.setItem(call.key, "new", request)
            case .setBytes: try await keychain.setBytes(call.key, Data("new".utf8), request)
            case .setCredentials:
                try await keychain.setCredentials(
                    Credentials(username: "user", password: "new"),
                    CredentialsOptions(
                        accessible: request.accessible, accessControl: request.accessControl,
                        authValidity: request.authValidity, synchronizable: request.synchronizable,
                        android: request.android))
            }
        }
    }

    @Test(
        "checkWrite throws exactly when setItem, setBytes and setCredentials would, with the same error, for every accessible × accessControl, holder of the key and device",
        arguments: Profile.all)
    func checkWriteAnswersTheWrite(profile: Profile) async throws {
        var compared = 0
        for call in Call.allCases {
            // Every holder for setItem; setBytes and setCredentials share its path, and are compared with the
            // holders that take a path of their own (none, another library's, a staged write).
            let holders = call == .setItem ? Holder.allCases : [.nothing, .foreign, .stagedAlone]
            for holder in holders {
                let items = try await Self.seeded(holder, key: call.key)
                // What a migration's planner passes: the key states read beforehand, in a world of its own (reading
                // them settles a staged write). Nil when they can't be read, as a planner then stops before asking.
                let states = try? await Self.world(profile, holder, items).0.keyStates()
                for (request, plain) in Self.requests where plain || holder == .nothing {
                    let write = try await Self.written(call, request, profile, holder, items)
                    let (checker, device) = try Self.world(profile, holder, items)
                    let check = await thrown {
                        try await checker.checkWrite(call.key, Self.checked(request, for: call))
                    }
                    // Described only when an expectation fails.
                    func context() -> Comment { "\(call) \(request) over \(holder) on \(profile.testDescription)" }
                    #expect(check?.code == write?.code, context())
                    #expect(check?.message == write?.message, context())
                    #expect(device.promptCount == 0, context())
                    if let states, plain {
                        let (planner, _) = try Self.world(profile, holder, items)
                        let planned = await thrown {
                            try await planner.checkWrite(call.key, Self.checked(request, for: call), states: states)
                        }
                        #expect(planned?.code == write?.code, context())
                    }
                    compared += 1
                }
            }
        }
        // 120 requests over no holder and 30 over each other holder: setItem with 8 others, the two with 2.
        #expect(compared == 3 * 120 + (8 + 2 + 2) * 30)
    }

    /// A dry run writes nothing: not even the settling of a staged write that a read would do. (The install
    /// check every call begins with is the app's, not the write's: a device that passed it is used here.)
    @Test("checkWrite leaves the database as it found it, whoever holds the key", arguments: Holder.allCases)
    func checkWriteWritesNothing(holder: Holder) async throws {
        let items = try await Self.seeded(holder, key: "k")
        let database = InMemoryKeychainDatabase()
        for item in items { try database.add(item) }
        let device = SimulatedDevice()
        let keychain = try Keychain(KeychainOptions(service: Self.service), database: database, device: device)
        _ = try await keychain.hasItem("other")
        let before = database.allItems()
        let writes = database.writeCount
        for (request, _) in Self.requests { _ = await thrown { try await keychain.checkWrite("k", request) } }
        #expect(database.writeCount == writes)
        #expect(database.allItems() == before)
    }
}
