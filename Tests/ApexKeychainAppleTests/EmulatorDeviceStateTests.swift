import ApexKeychain
import ApexKeychainApple
import Foundation
import Testing

/// Access groups (`apple-secitem.md` §2.8), class keys and the lock (§2.9), `akpu` and the passcode (§2.10).
@Suite("Emulator: access groups and device state")
struct EmulatorDeviceStateTests {
    @Test("an explicit group outside the app's is errSecMissingEntitlement in every call")
    func missingEntitlement() {
        let (_, keychain) = makeEmulator()
        #expect(keychain.add(genericPassword()) == .success)
        let other: SecItemDictionary = [.accessGroup: .string("OTHER.group")]
        #expect(keychain.add(genericPassword(account: "b", other)) == .missingEntitlement)
        #expect(keychain.copyMatching(search(other)).status == .missingEntitlement)
        #expect(keychain.update(search(other), [.label: .string("L")]) == .missingEntitlement)
        #expect(keychain.delete(search(other)) == .missingEntitlement)
        #expect(SecItemStatus.missingEntitlement.rawValue == -34018)
        #expect(keychain.items.count == 1)
    }

    @Test("without agrp a query sees every group of the app; with one, that group only")
    func queriesSeeAllGroups() {
        let (_, keychain) = makeEmulator(groups: [appGroup, sharedGroup])
        #expect(keychain.add(genericPassword(account: "mine")) == .success)
        #expect(keychain.add(genericPassword(account: "shared", [.accessGroup: .string(sharedGroup)])) == .success)
        let all = keychain.copyMatching(search([.matchLimit: .string("m_LimitAll"), .returnAttributes: .bool(true)]))
        #expect(all.result.list?.count == 2)
        let shared = keychain.copyMatching(
            search([
                .matchLimit: .string("m_LimitAll"), .returnAttributes: .bool(true), .accessGroup: .string(sharedGroup),
            ]))
        #expect(shared.result.list?.map { $0.attributes?[.account] } == [.string("shared")])
        #expect(keychain.delete(search()) == .success)
        #expect(keychain.items.isEmpty)
    }

    @Test("ak, aku and akpu need the device unlocked to be added; ck and cku the first unlock; dk nothing")
    func classKeysForAdd() {
        let device = SimulatedDevice(locked: true)
        let keychain = SecItemEmulator(device: device)
        for pdmn in ["ak", "aku", "akpu"] {
            #expect(
                keychain.add(genericPassword(account: pdmn, [.accessible: .string(pdmn)])) == .interactionNotAllowed)
        }
        #expect(keychain.add(genericPassword(account: "default")) == .interactionNotAllowed)  // ak by default
        for pdmn in ["ck", "cku", "dk", "dku"] {
            #expect(keychain.add(genericPassword(account: pdmn, [.accessible: .string(pdmn)])) == .success)
        }
        let beforeFirstUnlock = SecItemEmulator(device: SimulatedDevice(locked: true, unlockedSinceBoot: false))
        #expect(beforeFirstUnlock.add(genericPassword([.accessible: .string("ck")])) == .interactionNotAllowed)
        #expect(beforeFirstUnlock.add(genericPassword([.accessible: .string("cku")])) == .interactionNotAllowed)
        #expect(beforeFirstUnlock.add(genericPassword([.accessible: .string("dku")])) == .success)
        device.unlock()
        #expect(keychain.add(genericPassword(account: "ak", [.accessible: .string("ak")])) == .success)
    }

    @Test("reads of ak items fail while locked, attribute-only reads too; ck items read after the first unlock")
    func classKeysForReads() {
        let (device, keychain) = makeEmulator()
        #expect(keychain.add(genericPassword(account: "ak", [.accessible: .string("ak")])) == .success)
        #expect(keychain.add(genericPassword(account: "ck", [.accessible: .string("ck")])) == .success)
        device.lock()
        let ak: SecItemDictionary = [.account: .string("ak")]
        #expect(
            keychain.copyMatching(search(ak.merging([.returnData: .bool(true)]) { a, _ in a })).status
                == .interactionNotAllowed)
        #expect(
            keychain.copyMatching(search(ak.merging([.returnAttributes: .bool(true)]) { a, _ in a })).status
                == .interactionNotAllowed)
        #expect(keychain.copyMatching(search(ak)).status == .interactionNotAllowed)
        #expect(keychain.update(search(ak), [.label: .string("L")]) == .interactionNotAllowed)
        // The old item must be decrypted too: moving it to a class that is available doesn't help.
        #expect(keychain.update(search(ak), [.accessible: .string("ck")]) == .interactionNotAllowed)
        // Nor can an available item move into a class that isn't.
        #expect(
            keychain.update(search([.account: .string("ck")]), [.accessible: .string("aku")]) == .interactionNotAllowed)
        let ck = keychain.copyMatching(search([.account: .string("ck"), .returnData: .bool(true)]))
        #expect(ck.result == .data(bytes("secret")))
        // A listing over both fails as a whole.
        let listing = keychain.copyMatching(
            search([.matchLimit: .string("m_LimitAll"), .returnAttributes: .bool(true)]))
        #expect(listing == (.interactionNotAllowed, .none))
        // Deleting needs no class key.
        #expect(keychain.delete(search(ak)) == .success)
        device.reboot()
        #expect(keychain.copyMatching(search([.account: .string("ck")])).status == .interactionNotAllowed)
        device.unlock()
        #expect(keychain.copyMatching(search([.account: .string("ck")])).status == .success)
    }

    @Test("an akpu add without a passcode is errSecNotAvailable, or the status configured")
    func akpuWithoutPasscode() {
        let (device, keychain) = makeEmulator(SimulatedDevice(passcodeSet: false))
        let akpu = genericPassword([.accessible: .string("akpu")])
        #expect(keychain.add(akpu) == .notAvailable)
        let spec = SecAccessControlSpec(protection: "akpu", flags: .devicePasscode)
        #expect(keychain.add(genericPassword([.accessControl: .accessControl(spec)])) == .notAvailable)
        keychain.akpuWithoutPasscodeStatus = .decode
        #expect(keychain.add(akpu) == .decode)
        #expect(keychain.items.isEmpty)
        device.setPasscode(true)
        #expect(keychain.add(akpu) == .success)
    }

    @Test("akpu items go when the passcode is removed, and stay gone when a new one is set")
    func akpuRemovedWithPasscode() {
        let (device, keychain) = makeEmulator()
        #expect(keychain.add(genericPassword(account: "akpu", [.accessible: .string("akpu")])) == .success)
        #expect(keychain.add(genericPassword(account: "ak", [.accessible: .string("ak")])) == .success)
        device.setPasscode(false)
        #expect(keychain.copyMatching(search([.account: .string("akpu")])).status == .itemNotFound)
        device.setPasscode(true)
        #expect(keychain.copyMatching(search([.account: .string("akpu")])).status == .itemNotFound)
        #expect(keychain.items.map { $0.attributes[.account] } == [.string("ak")])
        #expect(keychain.add(genericPassword(account: "akpu", [.accessible: .string("akpu")])) == .success)
    }
}
