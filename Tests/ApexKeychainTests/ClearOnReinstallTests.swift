import ApexKeychain
import ApexTestSupport
import Foundation
import Testing

/// `ApexKeychainClearOnReinstall` (a setting of the app, on its ``Device``): the first call of any keychain after
/// the app was installed anew removes the package's own non-synchronizable items of the default access group, in
/// every service, and nothing else; the install marker is recorded. Before the first unlock it fails and removes
/// nothing.
@Suite("Clear on reinstall")
struct ClearOnReinstallTests {
    static let sharedGroup = "ABCDE12345.shared"
    static let clearing = KeychainOptions(service: "svc.a")

    /// A fixture whose app declares the setting, and may use the shared group.
    static func fixture(_ kind: DatabaseKind, clearOnReinstall: Bool = true) throws -> Fixture {
        try Fixture(
            kind, device: SimulatedDevice(clearOnReinstall: clearOnReinstall, accessGroups: .listed([sharedGroup])))
    }

    /// Where an item is, and under which account.
    struct Place: Hashable, CustomStringConvertible {
        var service: String
        var account: String
        var accessGroup: String
        var description: String { "\(accessGroup)/\(service)/\(account)" }
    }

    static func places(_ f: Fixture) throws -> Set<Place> {
        Set(try f.storedPlaces().map { Place(service: $0.service, account: $0.account, accessGroup: $0.accessGroup) })
    }

    /// The items the clear must keep: synchronizable, in a shared group, or another library's.
    static func survivors(_ f: Fixture) -> Set<Place> {
        let group = f.device.defaultAccessGroup
        return [
            Place(service: "svc.a", account: "a-synced", accessGroup: group),
            Place(service: "svc.a", account: "a-shared", accessGroup: sharedGroup),
            Place(service: "svc.a", account: "foreign-nil", accessGroup: group),
            Place(service: "svc.b", account: "foreign-other", accessGroup: group),
        ]
    }

    /// Writes with plain keychains the package's items of two services (some to be cleared, some not), and
    /// seeds foreign items.
    static func populate(_ f: Fixture) async throws {
        let a = try f.keychain(KeychainOptions(service: "svc.a"))
        let b = try f.keychain(KeychainOptions(service: "svc.b"))
        try await a.setItem("a-plain", "v")
        try await a.setItem("a-guarded", "v", SetOptions(accessControl: .biometryAny))
        try await a.setItem("a-device-only", "v", SetOptions(accessible: .afterFirstUnlockThisDeviceOnly))
        try await a.setItem("a-synced", "v", SetOptions(synchronizable: true))
        try await b.setItem("b-plain", "v")
        try await b.setCredentials(Credentials(username: "u", password: "p"))
        try await f.keychain(KeychainOptions(service: "svc.a", accessGroup: sharedGroup)).setItem("a-shared", "v")
        try f.seedForeign(service: "svc.a", account: "foreign-nil")
        try f.seedForeign(service: "svc.b", account: "foreign-other", creator: 0x524E_4B43)
        try #require(try places(f).count == 9)
    }

    @Test(
        "after a reinstall the first call removes the package's own non-synchronizable items of the default group in every service, then sets the marker",
        arguments: DatabaseKind.allCases)
    func clearsAfterReinstall(kind: DatabaseKind) async throws {
        let f = try Self.fixture(kind)
        try await Self.populate(f)
        f.device.reinstallApp()
        #expect(!f.device.installMarkerExists)

        let keychain = try f.keychain(Self.clearing)
        #expect(try await keychain.getAllKeys() == ["a-synced"])
        #expect(try Self.places(f) == Self.survivors(f))
        #expect(f.device.installMarkerExists)
    }

    /// The calls a keychain can begin with, each checked against the state after the clear.
    enum FirstCall: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case getItem, hasItem, getItemInfo, setItem, removeItem, getCredentials

        var testDescription: String { rawValue }

        func run(_ keychain: Keychain, _ f: Fixture) async throws {
            switch self {
            case .getItem: #expect(try await keychain.getItem("a-plain") == nil)
            case .hasItem: #expect(try await keychain.hasItem("a-guarded") == false)
            case .getItemInfo: #expect(try await keychain.getItemInfo("a-device-only") == nil)
            case .setItem: try await keychain.setItem("written-first", "v")
            case .removeItem: try await keychain.removeItem("not-there")
            case .getCredentials:
                let b = try f.keychain(KeychainOptions(service: "svc.b"))
                #expect(try await b.getCredentials() == nil)
            }
        }
    }

    @Test("the clear runs before whichever call comes first", arguments: DatabaseKind.allCases, FirstCall.allCases)
    func clearsBeforeFirstCall(kind: DatabaseKind, call: FirstCall) async throws {
        let f = try Self.fixture(kind)
        try await Self.populate(f)
        f.device.reinstallApp()
        let keychain = try f.keychain(Self.clearing)
        try await call.run(keychain, f)
        var expected = Self.survivors(f)
        if call == .setItem {
            expected.insert(Place(service: "svc.a", account: "written-first", accessGroup: f.device.defaultAccessGroup))
        }
        #expect(try Self.places(f) == expected)
        #expect(f.device.installMarkerExists)
    }

    @Test("with the install marker present nothing is removed", arguments: DatabaseKind.allCases)
    func markerKeepsItems(kind: DatabaseKind) async throws {
        let f = try Self.fixture(kind)
        // First launch after install: the marker is set (there is nothing to clear yet).
        #expect(try await f.keychain(Self.clearing).getAllKeys() == [])
        #expect(f.device.installMarkerExists)
        try await Self.populate(f)
        let before = try Self.places(f)

        f.device.relaunch()
        let keychain = try f.keychain(Self.clearing)
        #expect(try await keychain.getAllKeys() == ["a-device-only", "a-guarded", "a-plain", "a-synced"])
        try await f.keychain(KeychainOptions(service: "svc.b")).setItem("b-more", "v")
        #expect(try Self.places(f).subtracting(before).map(\.account) == ["b-more"])
        #expect(before.isSubset(of: try Self.places(f)))
    }

    @Test("an app without the setting never clears, and still records the marker", arguments: DatabaseKind.allCases)
    func withoutSettingNeverClears(kind: DatabaseKind) async throws {
        do {
            let f = try Self.fixture(kind, clearOnReinstall: false)
            try await Self.populate(f)
            f.device.reinstallApp()
            let before = try Self.places(f)
            let keychain = try f.keychain(KeychainOptions(service: "svc.a"))
            #expect(try await keychain.getAllKeys() == ["a-device-only", "a-guarded", "a-plain", "a-synced"])
            #expect(try await keychain.getItem("a-plain") == "v")
            try await keychain.setItem("a-more", "v")
            #expect(
                try Self.places(f)
                    == before.union([
                        Place(service: "svc.a", account: "a-more", accessGroup: f.device.defaultAccessGroup)
                    ]))
            #expect(f.device.installMarkerExists)
        }
    }

    @Test(
        "before the first unlock the first call fails with INTERACTION_NOT_ALLOWED and deletes nothing; after unlock the next call clears",
        arguments: DatabaseKind.allCases)
    func waitsForFirstUnlock(kind: DatabaseKind) async throws {
        let f = try Self.fixture(kind)
        try await Self.populate(f)
        f.device.reinstallApp()
        f.device.reboot()
        let before = try Self.places(f)

        let keychain = try f.keychain(Self.clearing)
        #expect(await errorCode { _ = try await keychain.getAllKeys() } == .INTERACTION_NOT_ALLOWED)
        #expect(try Self.places(f) == before)
        #expect(!f.device.installMarkerExists)

        f.device.unlock()
        #expect(try await keychain.getAllKeys() == ["a-synced"])
        #expect(try Self.places(f) == Self.survivors(f))
        #expect(f.device.installMarkerExists)
    }

    /// Issue 28: the marker says "this install is clean" only once it is. A removal that fails records no marker,
    /// so every call fails as the first did, and none reaches an old item, until a removal passes. On a store
    /// (writes grouped) and on a device's keychain (each call atomic on its own, nothing grouped) alike.
    @Test(
        "a removal that fails records no marker: every call fails, reaching no old item, until a removal passes",
        arguments: [true, false])
    func failedRemovalRecordsNoMarker(groupsWrites: Bool) async throws {
        let database = InMemoryKeychainDatabase(groupsWrites: groupsWrites)
        let f = Fixture(
            database: database,
            device: SimulatedDevice(clearOnReinstall: true, accessGroups: .listed([Self.sharedGroup])))
        try await Self.populate(f)
        f.device.reinstallApp()
        let before = try Self.places(f)
        let keychain = try f.keychain(Self.clearing)
        let other = try f.keychain(KeychainOptions(service: "svc.b"))

        for launch in 0..<2 {
            if launch > 0 { f.device.relaunch() }
            for call in FirstCall.allCases {
                database.failWrite(number: 1)
                let code = await errorCode {
                    switch call {
                    case .getItem: _ = try await keychain.getItem("a-plain")
                    case .hasItem: _ = try await keychain.hasItem("a-guarded")
                    case .getItemInfo: _ = try await keychain.getItemInfo("a-device-only")
                    case .setItem: try await keychain.setItem("written-first", "v")
                    case .removeItem: try await keychain.removeItem("not-there")
                    case .getCredentials: _ = try await other.getCredentials()
                    }
                }
                #expect(code == .INTERNAL, "\(call)")
                #expect(!f.device.installMarkerExists, "\(call)")
                #expect(try Self.places(f) == before, "\(call)")
            }
        }

        // The removal passes: only then does a call go on, and it finds none of the old items.
        #expect(try await keychain.getItem("a-plain") == nil)
        #expect(try await other.getCredentials() == nil)
        #expect(try Self.places(f) == Self.survivors(f))
        #expect(f.device.installMarkerExists)
    }

    /// The removal runs before the marker is recorded; a marker that then can't be recorded fails the call, and
    /// the next call removes again (nothing to remove by then: no call went on to write). No call reaches an old
    /// item, or writes one, before the marker is recorded.
    @Test(
        "a marker that can't be recorded after the removal fails every call until it can; no old item is reached",
        arguments: DatabaseKind.allCases)
    func unrecordedMarkerFailsEveryCall(kind: DatabaseKind) async throws {
        let f = try Self.fixture(kind)
        try await Self.populate(f)
        f.device.reinstallApp()
        f.device.failInstallMarker(.writing)
        let keychain = try f.keychain(Self.clearing)
        for launch in 0..<2 {
            if launch > 0 { f.device.relaunch() }
            #expect(await errorCode { _ = try await keychain.getItem("a-plain") } == .INTERNAL)
            #expect(await errorCode { try await keychain.setItem("written-first", "v") } == .INTERNAL)
            #expect(await errorCode { _ = try await keychain.getAllKeys() } == .INTERNAL)
            #expect(!f.device.installMarkerExists)
            #expect(try Self.places(f) == Self.survivors(f))
        }

        f.device.failInstallMarker(nil)
        #expect(try await keychain.getAllKeys() == ["a-synced"])
        #expect(f.device.installMarkerExists)
        try await keychain.setItem("written-after", "v")
        f.device.relaunch()
        #expect(try await keychain.getAllKeys() == ["a-synced", "written-after"])
    }

    /// Issue 28, from 000's "The marker is set without the key too, so an update that turns the key on deletes
    /// nothing on devices that already had the app": without the setting, a call that can't record the marker
    /// writes nothing (a later update would take the item for a new install's), failing as with the setting;
    /// calls that write nothing go on, and the next call checks again.
    @Test(
        "without the setting, a write that can't record the marker fails and writes nothing; reads and removals go on",
        arguments: DatabaseKind.allCases, [SimulatedDevice.InstallMarkerFailure.reading, .writing])
    func unrecordedMarkerRefusesWritesWithoutTheSetting(
        kind: DatabaseKind, failure: SimulatedDevice.InstallMarkerFailure
    ) async throws {
        let f = try Self.fixture(kind, clearOnReinstall: false)
        let keychain = try f.keychain(Self.clearing)
        try await keychain.setItem("kept", "v")
        try await keychain.setItem("removed", "v")
        f.device.reinstallApp()
        f.device.failInstallMarker(failure)
        f.device.relaunch()

        #expect(await errorCode { try await keychain.setItem("written", "v") } == .INTERNAL)
        #expect(await errorCode { try await keychain.setBytes("written", Data([1])) } == .INTERNAL)
        #expect(
            await errorCode { try await keychain.setCredentials(Credentials(username: "u", password: "p")) }
                == .INTERNAL)
        #expect(await errorCode { try await keychain.checkWrite("written") } == .INTERNAL)
        #expect(try await keychain.getItem("kept") == "v")
        #expect(try await keychain.hasItem("kept"))
        #expect(try await keychain.getAllKeys() == ["kept", "removed"])
        try await keychain.removeItem("removed")
        #expect(try f.allItems().map(\.account) == ["kept"])
        #expect(!f.device.installMarkerExists)

        // The marker store works again: the next call records the marker, and writes go on.
        f.device.failInstallMarker(nil)
        try await keychain.setItem("written", "v")
        #expect(f.device.installMarkerExists)
        // An update turns the setting on: nothing this install wrote is taken for a new install's.
        f.device.setClearOnReinstall(true)
        f.device.relaunch()
        #expect(try await keychain.getAllKeys() == ["kept", "written"])
    }

    /// As above, before the first unlock (the marker can't be read then): a write fails as with the setting,
    /// with `INTERACTION_NOT_ALLOWED`, and a call that writes nothing goes on.
    @Test("without the setting, a write before the first unlock fails with the install check's error")
    func writeBeforeFirstUnlockWithoutTheSetting() async throws {
        let f = try Self.fixture(.inMemory, clearOnReinstall: false)
        f.device.reboot()
        let keychain = try f.keychain(Self.clearing)
        let write = await thrown { try await keychain.setItem("k", "v") }
        #expect(write?.code == .INTERACTION_NOT_ALLOWED)
        #expect(write?.message.contains("install marker") == true)
        #expect(try await keychain.getAllKeys() == [])
        #expect(!f.device.installMarkerExists)
        f.device.unlock()
        try await keychain.setItem("k", "v")
        #expect(f.device.installMarkerExists)
    }
}
