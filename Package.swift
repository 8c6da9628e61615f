// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "ApexKeychain",
    // The specification's floor, iOS 15.1 (seed 003), and macOS 12 beside it: the on-device targets use CryptoKit
    // (iOS 13, macOS 10.15) and nothing newer outside an `#available` (docs/ARCHITECTURE.md's "On Apple platforms";
    // Tests/CLITests/ApplePlatformTests.swift checks both).
    platforms: [.iOS("15.1"), .macOS(.v12)],
    products: [
        .library(name: "ApexKeychain", targets: ["ApexKeychain"]),
        .library(name: "ApexKeychainStore", targets: ["ApexKeychainStore"]),
        .library(name: "ApexDumps", targets: ["ApexDumps"]),
        // The iOS backend: the Security framework and LocalAuthentication behind KeychainDatabase and Device.
        .library(name: "ApexKeychainApple", targets: ["ApexKeychainApple"]),
        // The migration toolkit, for an app's start-up migration (samples/ConsumerApp depends on these by name).
        .library(name: "ApexMigration", targets: ["ApexMigration"]),
        .library(name: "ReactNativeKeychainImporter", targets: ["ReactNativeKeychainImporter"]),
        .library(name: "ExpoSecureStoreImporter", targets: ["ExpoSecureStoreImporter"]),
        .library(name: "ReactNativeSensitiveInfoImporter", targets: ["ReactNativeSensitiveInfoImporter"]),
        .library(name: "ReactNativeEncryptedStorageImporter", targets: ["ReactNativeEncryptedStorageImporter"]),
        .executable(name: "apex-keychain", targets: ["apex-keychain"]),
        .executable(name: "apex-keychain-demo", targets: ["apex-keychain-demo"]),
        .executable(name: "apex-keychain-bench", targets: ["apex-keychain-bench"]),
    ],
    targets: [
        // System libraries: each module map names its library, and pkg-config supplies the paths. The targets an app
        // builds on a device (the core, ApexKeychainApple, ApexMigration, the importers, and ApexDumpModel and
        // ApexCrypto under them) reach none of them, nor ApexSodium, but `.when(platforms: [.linux])`:
        // Tests/CLITests/ApplePlatformTests.swift checks it.
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CSodium", path: "Sources/CSodium", pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(
            name: "CLibXML2", path: "Sources/CLibXML2", pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]),
        .systemLibrary(
            name: "CNettle", path: "Sources/CNettle", pkgConfig: "nettle",
            providers: [.apt(["nettle-dev"])]),
        // glibc's malloc.h, prctl and setrlimit (part of the C library itself).
        .systemLibrary(name: "CGlibc", path: "Sources/CGlibc"),

        // The one Swift wrapper of SQLite: connections, statements, binding, transactions, errors.
        // On Apple platforms SQLite is the SDK's module (`import SQLite3`), not CSQLite.
        .target(
            name: "ApexSQLite", dependencies: [.target(name: "CSQLite", condition: .when(platforms: [.linux]))],
            path: "Sources/ApexSQLite"),

        // The one home for libsodium: sealing, key derivation, HMAC, hashing, random bytes, wiping.
        .target(name: "ApexSodium", dependencies: ["CSodium"], path: "Sources/ApexSodium"),
        // The one home for Nettle: PBKDF2, AES key unwrap, AES-CBC and AES-GCM, for encrypted iOS backups.
        .target(name: "ApexNettle", dependencies: ["CNettle"], path: "Sources/ApexNettle"),
        // The on-device targets' hashing, HMAC, random bytes, wiping and AES-GCM: CryptoKit on Apple platforms,
        // ApexSodium on Linux; BLAKE2b in Swift on both.
        .target(
            name: "ApexCrypto", dependencies: [.target(name: "ApexSodium", condition: .when(platforms: [.linux]))],
            path: "Sources/ApexCrypto"),

        .target(name: "ApexKeychain", path: "Sources/ApexKeychain"),
        // Every decision in platform-neutral Swift, tested here against SecItemEmulator; the binding to the
        // Security framework and LocalAuthentication (Binding/) compiles on Apple platforms only.
        .target(name: "ApexKeychainApple", dependencies: ["ApexKeychain"], path: "Sources/ApexKeychainApple"),
        .target(
            name: "ApexKeychainStore", dependencies: ["ApexKeychain", "ApexSQLite", "ApexSodium"],
            path: "Sources/ApexKeychainStore"),
        // The dump model (pure Swift): what the readers make and the importers and the migration read.
        .target(name: "ApexDumpModel", dependencies: ["ApexKeychain"], path: "Sources/ApexDumpModel"),
        // The readers (libxml2, the SQLite reader); they re-export ApexDumpModel.
        .target(
            name: "ApexDumps", dependencies: ["ApexKeychain", "ApexDumpModel", "ApexSQLite", "ApexNettle", "CLibXML2"],
            path: "Sources/ApexDumps"),
        .target(
            name: "ApexMigration", dependencies: ["ApexKeychain", "ApexDumpModel", "ApexCrypto"],
            path: "Sources/ApexMigration"),
        .target(
            name: "ReactNativeKeychainImporter",
            dependencies: ["ApexMigration", "ApexDumpModel", "ApexKeychain", "ApexCrypto"],
            path: "Importers/ReactNativeKeychain"),
        .target(
            name: "ExpoSecureStoreImporter", dependencies: ["ApexMigration", "ApexDumpModel", "ApexKeychain"],
            path: "Importers/ExpoSecureStore"),
        // Shares expo's iOS protection mapping (package access) and ApexCrypto's SHA-256 (6.x file names).
        .target(
            name: "ReactNativeSensitiveInfoImporter",
            dependencies: [
                "ApexMigration", "ApexDumpModel", "ApexKeychain", "ApexCrypto", "ExpoSecureStoreImporter",
            ],
            path: "Importers/ReactNativeSensitiveInfo"),
        .target(
            name: "ReactNativeEncryptedStorageImporter",
            dependencies: ["ApexMigration", "ApexDumpModel", "ApexKeychain"],
            path: "Importers/ReactNativeEncryptedStorage"),
        .executableTarget(
            name: "apex-keychain",
            dependencies: [
                "ApexKeychain", "ApexKeychainStore", "ApexMigration", "ApexDumps", "ReactNativeKeychainImporter",
                "ExpoSecureStoreImporter", "ReactNativeSensitiveInfoImporter", "ReactNativeEncryptedStorageImporter",
                "CGlibc",
            ],
            path: "Sources/apex-keychain"),
        .executableTarget(
            name: "apex-keychain-bench",
            dependencies: [
                "ApexKeychain", "ApexKeychainStore", "ApexDumps", "ApexMigration", "ReactNativeKeychainImporter",
                "ExpoSecureStoreImporter", "ReactNativeSensitiveInfoImporter", "ReactNativeEncryptedStorageImporter",
                "SampleDumps", "ApexSQLite", "ApexNettle", "CSQLite", "CSodium", "CLibXML2",
            ],
            path: "Sources/apex-keychain-bench"),
        // Test support shared by the test targets: one scratch folder, one immutable-file probe, one raw-database helper,
        // one dump builder, and the databases the same suites run on (`DatabaseKind`: in-memory, the store, the iOS
        // backend over its emulator).
        .target(
            name: "ApexTestSupport",
            dependencies: ["ApexDumps", "ApexSQLite", "ApexKeychain", "ApexKeychainStore", "ApexKeychainApple"],
            path: "Tests/Support/ApexTestSupport"),
        // Test support: a child process that writes to a store, or migrates into it, until it is killed
        // (crash-consistency tests).
        .executableTarget(
            name: "store-writer",
            dependencies: [
                "ApexKeychain", "ApexKeychainStore", "ApexMigration", "ApexDumps", "ExpoSecureStoreImporter",
                "ReactNativeEncryptedStorageImporter",
            ],
            path: "Tests/Support/store-writer"),
        // The generated sample dumps of samples/ and the test fixtures (made-up secrets only), and the large
        // dumps of the benchmark; dump-samples writes them.
        .target(
            name: "SampleDumps", dependencies: ["ApexDumps", "ApexSQLite", "ApexSodium", "ApexNettle"],
            path: "Sources/SampleDumps"),
        .executableTarget(
            name: "dump-samples", dependencies: ["SampleDumps"],
            path: "Sources/dump-samples"),
        // The start-up migration as an app calls it (built by the tests, run by StartupMigrationSampleTests).
        .executableTarget(
            name: "StartupMigration",
            dependencies: [
                "ApexMigration", "ApexDumps", "ApexKeychain", "ApexKeychainApple", "ExpoSecureStoreImporter",
            ],
            path: "samples/StartupMigration"),
        // The Swift blocks of docs/LIBRARY.md, one file each (built by the tests; LibraryGuideTests compares them).
        .target(
            name: "LibraryGuide",
            dependencies: [
                "ApexKeychain", "ApexKeychainStore", "ApexDumps", "ApexMigration", "ReactNativeKeychainImporter",
                "ExpoSecureStoreImporter",
            ],
            path: "samples/LibraryGuide"),
        .executableTarget(
            name: "apex-keychain-demo", dependencies: ["ApexKeychain"],
            path: "Sources/apex-keychain-demo"),

        .testTarget(
            name: "ApexKeychainTests",
            dependencies: ["ApexTestSupport", "ApexKeychain", "ApexKeychainStore", "ApexKeychainApple"],
            path: "Tests/ApexKeychainTests"),
        .testTarget(
            name: "ApexKeychainAppleTests", dependencies: ["ApexTestSupport", "ApexKeychain", "ApexKeychainApple"],
            path: "Tests/ApexKeychainAppleTests"),
        .testTarget(
            name: "ApexKeychainStoreTests",
            dependencies: [
                "ApexTestSupport", "ApexKeychain", "ApexKeychainStore", "ApexSQLite", "store-writer",
            ],
            path: "Tests/ApexKeychainStoreTests", exclude: ["Fixtures"]),
        .testTarget(
            name: "ApexDumpsTests",
            dependencies: [
                "ApexTestSupport", "ApexDumps", "ApexKeychain", "ApexSQLite", "CLibXML2", "dump-samples",
                "SampleDumps",
            ],
            path: "Tests/ApexDumpsTests", resources: [.copy("Fixtures")]),
        .testTarget(
            name: "ImporterTests",
            dependencies: [
                "ApexTestSupport",
                "ReactNativeKeychainImporter", "ExpoSecureStoreImporter", "ReactNativeSensitiveInfoImporter",
                "ReactNativeEncryptedStorageImporter",
                "ApexMigration", "ApexDumps", "ApexKeychain", "SampleDumps",
            ],
            path: "Tests/ImporterTests", resources: [.copy("Fixtures")]),
        .testTarget(
            name: "ApexMigrationTests",
            dependencies: [
                "ApexTestSupport",
                "ApexMigration", "ApexDumps", "ApexKeychain", "ApexKeychainStore", "ApexKeychainApple",
                "ExpoSecureStoreImporter", "ReactNativeKeychainImporter", "ReactNativeSensitiveInfoImporter",
                "ReactNativeEncryptedStorageImporter", "StartupMigration",
            ],
            path: "Tests/ApexMigrationTests"),
        .testTarget(
            name: "CLITests",
            dependencies: [
                "ApexTestSupport",
                "apex-keychain", "ApexMigration", "ApexSQLite", "store-writer", "ApexKeychain",
                "ApexKeychainStore",
                "ApexDumps", "ExpoSecureStoreImporter", "ReactNativeSensitiveInfoImporter",
                "ReactNativeEncryptedStorageImporter", "SampleDumps", "LibraryGuide",
            ],
            path: "Tests/CLITests", exclude: ["Golden"]),
        .testTarget(
            name: "ApexSQLiteTests", dependencies: ["ApexTestSupport", "ApexSQLite", "CSQLite"],
            path: "Tests/ApexSQLiteTests"),
        // Known-answer tests of the libsodium wrapper (published vectors, or an independent implementation's).
        .testTarget(name: "ApexSodiumTests", dependencies: ["ApexSodium"], path: "Tests/ApexSodiumTests"),
        // Known-answer tests of the Nettle wrapper (published vectors, and Python's hashlib and `cryptography`).
        .testTarget(name: "ApexNettleTests", dependencies: ["ApexNettle"], path: "Tests/ApexNettleTests"),
        // Known-answer tests of the on-device home, and (on Linux) its Swift BLAKE2b against libsodium's.
        .testTarget(
            name: "ApexCryptoTests",
            dependencies: ["ApexCrypto", .target(name: "ApexSodium", condition: .when(platforms: [.linux]))],
            path: "Tests/ApexCryptoTests"),
        .testTarget(
            name: "SystemLibraryTests", dependencies: ["CSQLite", "CSodium", "CLibXML2", "CNettle"],
            path: "Tests/SystemLibraryTests"),
    ],
    swiftLanguageModes: [.v6]
)
