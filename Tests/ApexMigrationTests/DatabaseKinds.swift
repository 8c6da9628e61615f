import ApexKeychain
import ApexKeychainApple
import ApexKeychainStore
import ApexTestSupport
import Foundation
import Testing

/// The databases the on-device suites run on: the same tests over the in-memory database, the embedded store and
/// the iOS backend over the Security-framework emulator.
enum DatabaseKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case inMemory
    /// The embedded store: a real SQLite file with a key file, in the process's scratch folder.
    case sqlite
    /// `SecItemKeychainDatabase` over a `SecItemEmulator` that follows `device`.
    case secItem

    var testDescription: String { rawValue }

    /// A fresh, empty database of this kind on `device` (the emulator reads the device's state at every call).
    func make(device: SimulatedDevice) throws -> any KeychainDatabase {
        switch self {
        case .inMemory:
            return InMemoryKeychainDatabase()
        case .sqlite:
            let folder = try ScratchFolder.perProcess()
            let url = folder.appendingPathComponent("store.db")
            return try SQLiteKeychainDatabase.create(
                at: url, key: .keyFile(SQLiteKeychainDatabase.defaultKeyFile(for: url)), device: .ios)
        case .secItem:
            return SecItemKeychainDatabase(calls: SecItemEmulator(device: device))
        }
    }
}

extension DatabaseKind {
    /// A fresh database of this kind on `device`, and for ``secItem`` the emulator behind it, whose `calls` are the
    /// keychain round trips a device would make.
    func makeObserved(device: SimulatedDevice) throws -> (database: any KeychainDatabase, emulator: SecItemEmulator?) {
        guard self == .secItem else { return (try make(device: device), nil) }
        let emulator = SecItemEmulator(device: device)
        return (SecItemKeychainDatabase(calls: emulator), emulator)
    }
}

extension SecItemEmulator {
    /// The calls so far that list (`m_LimitAll`), by class.
    func listings(of itemClass: String) -> Int {
        calls.count {
            $0.kind == .copyMatching && $0.query[.matchLimit] == .string(SecItemConstant.matchLimitAll)
                && $0.query[.itemClass] == .string(itemClass)
        }
    }

    /// The calls so far as `kind=n` sorted by kind (for a test's message).
    var callSummary: String {
        Call.Kind.allCases.map { kind in "\(kind.rawValue)=\(calls.count { $0.kind == kind })" }
            .joined(separator: " ")
    }
}

extension SecItemEmulator {
    /// The listings so far of other libraries' items (no creator mark in the query), by class.
    func sourceListings(of itemClass: String) -> Int {
        calls.count {
            $0.kind == .copyMatching && $0.query[.matchLimit] == .string(SecItemConstant.matchLimitAll)
                && $0.query[.itemClass] == .string(itemClass) && $0.query[.creator] == nil
        }
    }
}
