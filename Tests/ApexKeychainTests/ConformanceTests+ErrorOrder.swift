import ApexKeychain
import ApexTestSupport
import Testing

/// The order of a write's errors, choice C1 (see ``ConformanceTests``).
extension ConformanceTests {
    // MARK: C1, the order of a write's errors

    /// C1 (docs/CONFORMANCE.md; the pages list what makes a write fail, not which failure wins): every failure of
    /// the order holds at once, and each step removes the one that won, from the arguments down to a database
    /// fault. `checkWrite` answers the same at every step it can take (it has no value and writes nothing).
    @Test(
        "000/003/004 C1: a write reports the first failure in the documented order, step by step (iOS)",
        arguments: DatabaseKind.allCases)
    func writeErrorOrder(kind: DatabaseKind) async throws {
        let device = SimulatedDevice(
            biometry: .faceID, passcodeSet: false, hasFaceIDUsageDescription: false, clearOnReinstall: true)
        let outside = "ZZZZZ99999.com.other.shared"
        // The emulated keychain holds the other group too, so the item seeded there is taken (the device's
        // entitlement, which the write checks, still lacks it).
        let f = try Fixture(kind, device: device, accessGroups: [device.defaultAccessGroup, outside])
        // Seeded before the restart: a keychain refuses every add before the first unlock (§2.9).
        try f.seedForeign(service: "svc.order", account: "k")
        try f.seedForeign(service: "svc.order", account: "k", accessGroup: outside)
        device.reboot()
        device.failInstallMarker(.reading)
        var keychain = try f.keychain(KeychainOptions(service: "svc.order", accessGroup: outside))
        var (key, value, label) = ("", "v\u{0}", "l\u{0}")
        var options = SetOptions(accessible: .whenUnlocked, accessControl: .biometryAny, synchronizable: true)
        var items = 2

        func expectWinner(
            _ code: KeychainErrorCode, naming fragment: String, checkWrite: Bool = true,
            sourceLocation: SourceLocation = #_sourceLocation
        ) async throws {
            var write = options
            write.label = label
            expectError(
                await thrown { try await keychain.setItem(key, value, write) }, code, naming: fragment,
                sourceLocation: sourceLocation)
            if checkWrite {
                expectError(
                    await thrown { try await keychain.checkWrite(key, write) }, code, naming: fragment,
                    sourceLocation: sourceLocation)
            }
            #expect(try f.storedPlaces().count == items, sourceLocation: sourceLocation)
        }

        // 1. The arguments: the value, the key, the label, then the protection.
        try await expectWinner(.INVALID_ARGUMENT, naming: "value", checkWrite: false)
        value = "v"
        try await expectWinner(.INVALID_ARGUMENT, naming: "key")
        key = "k"
        try await expectWinner(.INVALID_ARGUMENT, naming: "label")
        label = "l"
        try await expectWinner(.INVALID_ARGUMENT, naming: "synchronizable")
        options.synchronizable = nil
        // 2. The entitlement.
        try await expectWinner(.MISSING_ENTITLEMENT, naming: "entitlement")
        keychain = try f.keychain(KeychainOptions(service: "svc.order"))
        // 3. The install check: before the first unlock, then a marker that can't be read.
        try await expectWinner(.INTERACTION_NOT_ALLOWED, naming: "clearOnReinstall")
        device.unlock()
        device.lock()
        try await expectWinner(.INTERNAL, naming: "install marker")
        device.failInstallMarker(nil)
        // 4. The device: the passcode, the enrolment, the usage description.
        try await expectWinner(.PASSCODE_NOT_SET, naming: "passcode")
        device.setPasscode(true)
        try await expectWinner(.BIOMETRY_NOT_ENROLLED, naming: "enrolled")
        device.enrollBiometrics()
        try await expectWinner(.MISSING_USAGE_DESCRIPTION, naming: "NSFaceIDUsageDescription")
        device.setFaceIDUsageDescription(true)
        // 5. The lock, from the class being written.
        try await expectWinner(.INTERACTION_NOT_ALLOWED, naming: "locked")
        device.unlock()
        // 6. Another library's item under the key.
        try await expectWinner(.INVALID_ARGUMENT, naming: "another library")
        let foreign = try #require(try f.allItems().first { $0.accessGroup == device.defaultAccessGroup })
        try f.database.delete(foreign.primaryKey)
        items = 1
        // 7. A database fault (the in-memory database can plant one).
        if let memory = f.database as? InMemoryKeychainDatabase {
            memory.failWrite(number: 1)
            try await expectWinner(.INTERNAL, naming: "database error", checkWrite: false)
        }
        try await keychain.setItem(
            key, value, SetOptions(accessible: .whenUnlocked, accessControl: .biometryAny, label: label))
        #expect(try await keychain.getItemInfo("k")?.accessControl == .biometryAny)
        #expect(device.promptCount == 0)
    }

    /// C1, step 4 on Android, where UNSUPPORTED and HARDWARE_UNAVAILABLE can hold, and on a device without a
    /// sensor, where BIOMETRY_NOT_AVAILABLE and BIOMETRY_NOT_ENROLLED hold together.
    @Test(
        "003 C1: the device's failures in order: UNSUPPORTED, PASSCODE_NOT_SET, BIOMETRY_NOT_AVAILABLE, BIOMETRY_NOT_ENROLLED, HARDWARE_UNAVAILABLE, then the lock",
        arguments: DatabaseKind.allCases)
    func deviceErrorOrder(kind: DatabaseKind) async throws {
        let device = SimulatedDevice(
            platform: .android(apiLevel: 29), biometry: .fingerprint, passcodeSet: false, hasStrongBox: false,
            locked: true)
        let f = try Fixture(kind, device: device)
        let keychain = try f.keychain()
        var options = SetOptions(
            accessible: .whenUnlocked, accessControl: .biometryAny, authValidity: 10,
            android: AndroidOptions(keyStorage: .strongboxRequired))
        func winner() async -> KeychainErrorCode? { await errorCode { try await keychain.setItem("k", "v", options) } }

        #expect(await winner() == .UNSUPPORTED)
        device.upgradeOS(to: .android(apiLevel: 30))
        #expect(await winner() == .PASSCODE_NOT_SET)
        device.setPasscode(true)
        #expect(await winner() == .BIOMETRY_NOT_ENROLLED)
        device.enrollBiometrics()
        #expect(await winner() == .HARDWARE_UNAVAILABLE)
        options.android = AndroidOptions(keyStorage: .strongbox)
        #expect(await winner() == .INTERACTION_NOT_ALLOWED)
        device.unlock()
        #expect(await winner() == nil)
        #expect(try await keychain.getItemInfo("k")?.android?.securityLevel == .tee)

        // No sensor: nothing is enrolled either, and the missing sensor is named; the passcode comes first.
        let bare = try Fixture(kind, device: SimulatedDevice(biometry: nil, passcodeSet: false))
        let noSensor = try bare.keychain()
        let biometric = SetOptions(accessControl: .biometryCurrentSet)
        #expect(await errorCode { try await noSensor.setItem("k", "v", biometric) } == .PASSCODE_NOT_SET)
        bare.device.setPasscode(true)
        #expect(!bare.device.state().biometryEnrolled)
        #expect(await errorCode { try await noSensor.setItem("k", "v", biometric) } == .BIOMETRY_NOT_AVAILABLE)
        #expect(try bare.allItems().isEmpty)
    }

    /// C1, step 1 for credentials: "The value (or the server, username and password of credentials), the key and
    /// the label, then the protection".
    @Test(
        "001 C1: a credentials write checks the server, the username, the password, then the protection",
        arguments: DatabaseKind.allCases)
    func credentialsArgumentOrder(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let keychain = try f.keychain()
        var pair = Credentials(username: "", password: "p\u{0}")
        var options = CredentialsOptions(server: "", accessControl: .passcode, synchronizable: true)
        func winner() async -> KeychainError? { await thrown { try await keychain.setCredentials(pair, options) } }

        expectError(await winner(), .INVALID_ARGUMENT, naming: "server")
        options.server = "api.example.com"
        expectError(await winner(), .INVALID_ARGUMENT, naming: "username must not be empty")
        pair.username = "u\u{0}"
        expectError(await winner(), .INVALID_ARGUMENT, naming: "username must not contain")
        pair.username = "u"
        expectError(await winner(), .INVALID_ARGUMENT, naming: "password")
        pair.password = "p"
        expectError(await winner(), .INVALID_ARGUMENT, naming: "synchronizable")
        options.synchronizable = nil
        #expect(await winner() == nil)
        #expect(try f.allItems().count == 1)
    }
}
