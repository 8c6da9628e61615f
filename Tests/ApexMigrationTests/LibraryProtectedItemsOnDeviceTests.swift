import ApexKeychain
import ApexKeychainApple
import ApexMigration
import ExpoSecureStoreImporter
import Foundation
import ReactNativeKeychainImporter
import Testing

/// The libraries' items with access control on the emulator (react-native-keychain's `accessControl`, expo's
/// `requireAuthentication`): left pending by default without a prompt, and migrated under one prompt when the app
/// allows it, one authenticated read per item more.
@Suite("On-device migration: the libraries' protected items on the emulator")
struct LibraryProtectedItemsOnDeviceTests {
    typealias Library = LibraryItemsOnDeviceTests.Library

    /// The protected items, each library's with the access control it gives them.
    static let libraries: [(library: Library, accessControl: AccessControl)] = [
        (
            Library(name: "react-native-keychain accessControl", importer: { ReactNativeKeychainImporter() }) { count in
                (0..<count).map { index in
                    let value = "sample-password-\(index)"
                    return (
                        LibraryQueries.keychainGeneric(
                            service: "svc\(index)", username: "user\(index)", password: value, accessible: "aku",
                            accessControl: .biometryAny), value
                    )
                }
            }, .biometryAny
        ),
        (
            Library(name: "expo-secure-store requireAuthentication", importer: { ExpoSecureStoreImporter() }) {
                count in
                (0..<count).map { index in
                    let value = "sample-value-\(index)"
                    return (LibraryQueries.expo(key: "key\(index)", value: value, requireAuthentication: true), value)
                }
            }, .biometryCurrentSet
        ),
    ]

    static var names: [String] { libraries.map(\.library.name) }

    static func entry(_ name: String) throws -> (library: Library, accessControl: AccessControl) {
        try #require(libraries.first { $0.library.name == name })
    }

    @Test(
        "by default protected items are pending: no prompt, no read of their values, the sources stay", arguments: names
    )
    func pendingByDefault(_ name: String) async throws {
        let (library, _) = try Self.entry(name)
        let device = SimulatedDevice(bundleIdentifier: LibraryItemsOnDeviceTests.bundleID, teamIdentifier: "A1B2C3D4E5")
        let emulator = try LibraryItemsOnDeviceTests.seeded(library.items(3).map(\.query), device: device)
        let before = emulator.items
        let database = SecItemKeychainDatabase(calls: emulator)
        let report = try await LibraryItemsOnDeviceTests.migration(library.importer(), database, device).run()
        #expect(report.items.count == 3)
        #expect(
            report.items.allSatisfy { $0.action == .blocked && $0.state == .pending }, "\(report.items.map(\.reason))")
        #expect(device.promptCount == 0 && emulator.promptsShown == 0)
        let trips = LibraryItemsOnDeviceTests.RoundTrips(emulator.calls)
        #expect(trips.authenticatedReads == 0 && trips.items == 0, "\(trips)")
        #expect(emulator.items.filter { $0.attributes[.creator] == nil } == before)
        #expect(!report.isComplete)
    }

    @Test(
        "allowed a prompt (naming the access control, which the keychain doesn't disclose): one prompt for the run, one authenticated read per item more",
        arguments: names, [10, 1000])
    func migratedWithPrompt(_ name: String, count: Int) async throws {
        let (library, accessControl) = try Self.entry(name)
        let device = SimulatedDevice(bundleIdentifier: LibraryItemsOnDeviceTests.bundleID, teamIdentifier: "A1B2C3D4E5")
        let seeded = library.items(count)
        let emulator = try LibraryItemsOnDeviceTests.seeded(seeded.map(\.query), device: device)
        let database = SecItemKeychainDatabase(calls: emulator)
        let clock = ContinuousClock()
        let started = clock.now
        let report = try await LibraryItemsOnDeviceTests.migration(
            library.importer(), database, device,
            protected: .readWithPrompt(Prompt(title: "Move your saved sign-in"), accessControl: accessControl)
        ).run()
        let spent = clock.now - started
        let trips = LibraryItemsOnDeviceTests.RoundTrips(emulator.calls)
        #expect(
            report.summary.verified == count, "\(report.items.prefix(2).map { $0.reason ?? $0.resultReason ?? "" })")
        #expect(device.promptCount == 1, "one prompt for the run")
        #expect(emulator.promptsShown == 0, "the keychain shows none of its own")
        #expect(trips.sourceListings.values.allSatisfy { $0 <= 2 }, "\(trips)")
        // Per item: the source's authenticated read, the add, the (authenticated) read-back, the source's removal.
        #expect(trips.items <= 4 * count, "\(trips)")
        print("SecItem round trips, \(name), \(count) protected items, in \(spent): \(trips)")
        let foreign = emulator.items.filter { $0.attributes[.creator] == nil }
        #expect(foreign.isEmpty, "every source removed")
        let target = try #require(report.items.first?.target)
        let keychain = try Keychain(KeychainOptions(service: target.service), database: database, device: device)
        #expect(try await keychain.getItemInfo(target.key)?.accessControl == accessControl)
        // The values, read with the context of one prompt for their access control, as the core's read will.
        let passed = await device.evaluate(
            AuthenticationRequest(
                policy: Keychain.promptPolicy(for: accessControl), prompt: Prompt(), service: target.service,
                key: target.key, accessControl: accessControl, accessible: nil))
        var values: [String] = []
        for item in report.items {
            let itemTarget = try #require(item.target)
            let key = try #require(
                try database.attributes(matching: ItemQuery(service: itemTarget.service)).first {
                    $0.isApexItem && $0.account == itemTarget.key
                }?.primaryKey)
            values.append(String(decoding: try database.value(for: key, authentication: passed.context), as: UTF8.self))
        }
        #expect(Set(values) == Set(seeded.map(\.value)))
        // The core's read hands its prompt's context to the keychain: the migrated item opens through the app's
        // own read, with one prompt.
        let read = try await keychain.getBytes(target.key, GetOptions(prompt: Prompt()))
        #expect(read.map { seeded.map(\.value).contains(String(decoding: $0, as: UTF8.self)) } == true)
    }
}
