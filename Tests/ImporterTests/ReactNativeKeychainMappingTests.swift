import ApexDumps
import ApexKeychain
import ApexMigration
import ApexTestSupport
import Foundation
import ReactNativeKeychainImporter
import Testing

/// One `pdmn` as found, and what the package must keep.
struct RNKProtectionCase: Sendable, CustomTestStringConvertible {
    let pdmn: String?
    /// The class, or a fragment of the blocked reason.
    let expected: Result<Accessible, RNKReason>
    let noted: Bool
    var testDescription: String { pdmn ?? "no pdmn" }
}

/// One access control as found, and what the package must keep.
struct RNKAccessControlCase: Sendable, CustomTestStringConvertible {
    let flags: AccessControlFlags?
    let expected: Result<AccessControl, RNKReason>
    var testDescription: String { flags.map { "flags \($0.rawValue)" } ?? "no accc" }
}

struct RNKReason: Error, Sendable, Equatable {
    let fragment: String
    init(_ fragment: String) { self.fragment = fragment }
}

/// The full mapping tables: every `pdmn` × access control × `sync`, the access control's own protection, and
/// every Android cipher.
@Suite struct ReactNativeKeychainMappingTests {
    static let protections: [RNKProtectionCase] = [
        .init(pdmn: "ak", expected: .success(.whenUnlocked), noted: false),
        .init(pdmn: "ck", expected: .success(.afterFirstUnlock), noted: false),
        .init(pdmn: "dk", expected: .success(.afterFirstUnlock), noted: true),
        .init(pdmn: "aku", expected: .success(.whenUnlockedThisDeviceOnly), noted: false),
        .init(pdmn: "cku", expected: .success(.afterFirstUnlockThisDeviceOnly), noted: false),
        .init(pdmn: "dku", expected: .success(.afterFirstUnlockThisDeviceOnly), noted: true),
        .init(pdmn: "akpu", expected: .success(.whenPasscodeSetThisDeviceOnly), noted: false),
        .init(pdmn: "f", expected: .failure(RNKReason("unknown protection class (pdmn) 'f'")), noted: false),
        .init(pdmn: nil, expected: .failure(RNKReason("records no protection class (pdmn)")), noted: false),
    ]

    static let accessControls: [RNKAccessControlCase] = [
        .init(flags: nil, expected: .success(.none)),
        .init(flags: [], expected: .success(.none)),
        .init(flags: [.userPresence], expected: .success(.biometryAnyOrPasscode)),
        .init(flags: [.biometryAny, .devicePasscode, .or], expected: .success(.biometryAnyOrPasscode)),
        .init(flags: [.biometryAny], expected: .success(.biometryAny)),
        .init(flags: [.biometryCurrentSet], expected: .success(.biometryCurrentSet)),
        .init(flags: [.devicePasscode], expected: .success(.passcode)),
        .init(flags: [.biometryCurrentSet, .devicePasscode, .or], expected: .success(.biometryCurrentSetOrPasscode)),
        .init(flags: [.biometryAny, .devicePasscode], expected: .failure(RNKReason("and-combination"))),
        .init(flags: [.biometryAny, .devicePasscode, .and], expected: .failure(RNKReason("and-combination"))),
        .init(flags: [.biometryCurrentSet, .devicePasscode, .and], expected: .failure(RNKReason("and-combination"))),
        .init(flags: [.applicationPassword], expected: .failure(RNKReason("application password"))),
        .init(flags: [.userPresence, .applicationPassword], expected: .failure(RNKReason("application password"))),
        .init(flags: [.biometryAny, .privateKeyUsage], expected: .failure(RNKReason("private-key usage"))),
        .init(flags: [.watch], expected: .failure(RNKReason("paired watch"))),
        .init(flags: [.biometryAny, .watch, .or], expected: .failure(RNKReason("paired watch"))),
        .init(flags: [.biometryAny, .biometryCurrentSet, .or], expected: .failure(RNKReason("has no equivalent"))),
        .init(flags: [.userPresence, .devicePasscode, .or], expected: .failure(RNKReason("has no equivalent"))),
        .init(flags: [.biometryAny, .or], expected: .failure(RNKReason("has no equivalent"))),
        .init(
            flags: AccessControlFlags(rawValue: 1 << 20),
            expected: .failure(RNKReason("flags the importer does not know"))),
    ]

    static func importOne(_ record: KeychainRecord) throws -> SourceItem {
        let items = try ReactNativeKeychainImporter().importItems(
            from: [keychainDump([record])], options: ImportOptions(bundleID: "com.example.app"))
        return try #require(items.first)
    }

    @Test(arguments: protections, accessControls)
    func iosMappingTable(protection: RNKProtectionCase, control: RNKAccessControlCase) throws {
        for sync in [false, true] {
            let item = try Self.importOne(rnkRecord(pdmn: protection.pdmn, flags: control.flags, sync: sync))
            let expectedReason: String?
            var expectedOptions: SetOptions?
            switch (protection.expected, control.expected) {
            case (.failure(let reason), _): expectedReason = reason.fragment
            case (_, .failure(let reason)): expectedReason = reason.fragment
            case (.success(let accessible), .success(let accessControl)):
                if sync, accessible.isThisDeviceOnly {
                    expectedReason = "a this-device-only class"
                } else if sync, accessControl != .none {
                    expectedReason = "does not sync items with access control"
                } else {
                    expectedReason = nil
                    expectedOptions = SetOptions(
                        accessible: accessible, accessControl: accessControl, synchronizable: sync)
                }
            }
            if let expectedReason {
                guard case .blocked(let reason) = item.verdict else {
                    Issue.record("sync \(sync): expected blocked (\(expectedReason)), found \(item.verdict)")
                    continue
                }
                #expect(reason.contains(expectedReason), "sync \(sync): \(reason)")
                // The intended target, with no protection (issue 14, item 2).
                #expect(
                    item.target
                        == .unknownProtection(service: "com.example.app", key: "credentials", kind: .credentials))
            } else {
                #expect(item.verdict == .migrate, "sync \(sync)")
                #expect(item.target?.options == expectedOptions, "sync \(sync)")
                let notedAlways = item.notes.contains { $0.contains("is deprecated and not supported by the package") }
                #expect(notedAlways == protection.noted)
                if protection.noted {
                    #expect(item.notes.contains { $0.contains("no longer readable before the first unlock") })
                }
                if case .success(let control) = control.expected, control.isBoundToCurrentSet {
                    #expect(item.notes.contains { $0.contains("bound to the biometrics enrolled when it is written") })
                }
                #expect(item.notes.contains { $0.contains("issue #800") } == sync)
            }
        }
    }

    @Test(arguments: [
        ("ck", "aku", Accessible.whenUnlockedThisDeviceOnly),
        ("ak", "cku", .whenUnlockedThisDeviceOnly),
        ("akpu", "ck", .whenPasscodeSetThisDeviceOnly),
        ("dk", "dku", .afterFirstUnlockThisDeviceOnly),
        ("ck", "ak", .whenUnlocked),
    ])
    func accessControlProtectionDisagreeingWithPdmnKeepsTheStronger(
        pdmn: String, inside: String, expected: Accessible
    ) throws {
        let item = try Self.importOne(rnkRecord(pdmn: pdmn, flags: [.biometryAny], insideProtection: inside))
        #expect(item.target?.options.accessible == expected)
        #expect(
            item.notes.contains {
                $0.contains("the access control records protection class '\(inside)' but pdmn is '\(pdmn)'")
            })
        #expect(item.source.protection["accessControlProtection"] == inside)
        #expect(item.source.protection["accessControlFlags"] == "biometryAny")
    }

    @Test func accessControlProtectionAloneOrAgreeing() throws {
        let alone = try Self.importOne(rnkRecord(pdmn: nil, flags: [.devicePasscode], insideProtection: "akpu"))
        #expect(
            alone.target?.options
                == SetOptions(
                    accessible: .whenPasscodeSetThisDeviceOnly, accessControl: .passcode, synchronizable: false))
        let agreeing = try Self.importOne(rnkRecord(pdmn: "aku", flags: [.biometryAny], insideProtection: "aku"))
        #expect(agreeing.notes.allSatisfy { !$0.contains("the access control records") })
        let unknown = try Self.importOne(rnkRecord(pdmn: "ck", flags: [.biometryAny], insideProtection: "zz"))
        #expect(
            unknown.verdict
                == .blocked(
                    "unknown protection class inside the access control 'zz': it has no equivalent in the package"))
    }

    @Test(arguments: [
        ("FacebookConceal", false, SetOptions(accessible: .afterFirstUnlock, accessControl: AccessControl.none)),
        ("FacebookConceal", true, SetOptions(accessible: .afterFirstUnlock, accessControl: AccessControl.none)),
        (
            "KeystoreAESCBC", false,
            SetOptions(
                accessible: .afterFirstUnlock, accessControl: AccessControl.none,
                android: AndroidOptions(keyStorage: .strongbox))
        ),
        (
            "KeystoreAESCBC", true,
            SetOptions(
                accessible: .afterFirstUnlock, accessControl: AccessControl.none,
                android: AndroidOptions(keyStorage: .strongbox))
        ),
        (
            "KeystoreAESGCM_NoAuth", false,
            SetOptions(
                accessible: .afterFirstUnlock, accessControl: AccessControl.none,
                android: AndroidOptions(keyStorage: .strongbox))
        ),
        (
            "KeystoreAESGCM_NoAuth", true,
            SetOptions(
                accessible: .afterFirstUnlock, accessControl: AccessControl.none,
                android: AndroidOptions(keyStorage: .strongbox))
        ),
        (
            "KeystoreRSAECB", false,
            SetOptions(
                accessible: .afterFirstUnlock, accessControl: .biometryAny, authValidity: 5,
                android: AndroidOptions(keyStorage: .strongbox))
        ),
        (
            "KeystoreRSAECB", true,
            SetOptions(
                accessible: .afterFirstUnlock, accessControl: .biometryAnyOrPasscode, authValidity: 5,
                android: AndroidOptions(keyStorage: .strongbox))
        ),
        (
            "KeystoreAESGCM", false,
            SetOptions(
                accessible: .afterFirstUnlock, accessControl: .biometryAny, authValidity: 5,
                android: AndroidOptions(keyStorage: .strongbox))
        ),
        (
            "KeystoreAESGCM", true,
            SetOptions(
                accessible: .afterFirstUnlock, accessControl: .biometryAnyOrPasscode, authValidity: 5,
                android: AndroidOptions(keyStorage: .strongbox))
        ),
        ("KeystoreAES", false, nil),
        ("", true, nil),
    ])
    func androidMappingTable(cipher: String, acceptsPasscode: Bool, expected: SetOptions?) throws {
        let dump = preferencesDump(
            "shared_prefs/RN_KEYCHAIN.xml",
            [
                ("svc:u", "AQIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n"),
                ("svc:p", "AQIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n"), ("svc:c", cipher),
            ])
        let items = try ReactNativeKeychainImporter().importItems(
            from: [dump], options: ImportOptions(androidBiometryAcceptsPasscode: acceptsPasscode))
        let item = try #require(items.first)
        #expect(item.source.protection == ["cipher": cipher])
        if expected == nil {
            #expect(item.verdict == .blocked("unknown cipher '\(cipher)': its protection can't be mapped"))
            // Its intended target, with no protection (issue 14, item 2).
            #expect(item.target == .unknownProtection(service: "svc", key: "credentials", kind: .credentials))
        } else {
            #expect(item.target?.options == expected)
        }
        if expected == nil {
        } else {
            #expect(item.verdict == .migrate)
            #expect(item.notes.contains { $0.contains("Android has no lock-state classes") })
        }
        if cipher.hasPrefix("Keystore"), expected != nil {
            #expect(item.value == .sealed("Android Keystore key: the value can only be read on the device"))
        }
    }
}
