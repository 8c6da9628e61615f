// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "ApexKeychain",
    products: [
        .library(name: "ApexKeychain", targets: ["ApexKeychain"]),
        .library(name: "ApexKeychainStore", targets: ["ApexKeychainStore"]),
        .executable(name: "apex-keychain", targets: ["apex-keychain"]),
        .executable(name: "apex-keychain-demo", targets: ["apex-keychain-demo"]),
        .executable(name: "apex-keychain-bench", targets: ["apex-keychain-bench"]),
    ],
    targets: [
        // System libraries: each module map names its library, and pkg-config supplies the paths.
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CSodium", path: "Sources/CSodium", pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(
            name: "CLibXML2", path: "Sources/CLibXML2", pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]),

        .target(name: "ApexKeychain", path: "Sources/ApexKeychain"),
        .target(
            name: "ApexKeychainStore", dependencies: ["ApexKeychain", "CSQLite", "CSodium"],
            path: "Sources/ApexKeychainStore"),
        .executableTarget(
            name: "apex-keychain", dependencies: ["ApexKeychain", "ApexKeychainStore"],
            path: "Sources/apex-keychain"),
        .executableTarget(
            name: "apex-keychain-bench", dependencies: ["ApexKeychain", "ApexKeychainStore", "CSQLite", "CSodium"],
            path: "Sources/apex-keychain-bench"),
        // Test support: a child process that writes to a store until it is killed (crash-consistency tests).
        .executableTarget(
            name: "store-writer", dependencies: ["ApexKeychain", "ApexKeychainStore"],
            path: "Tests/Support/store-writer"),
        .executableTarget(
            name: "apex-keychain-demo", dependencies: ["ApexKeychain"],
            path: "Sources/apex-keychain-demo"),

        .testTarget(
            name: "ApexKeychainTests", dependencies: ["ApexKeychain", "ApexKeychainStore"],
            path: "Tests/ApexKeychainTests"),
        .testTarget(
            name: "ApexKeychainStoreTests", dependencies: ["ApexKeychain", "ApexKeychainStore", "CSQLite", "store-writer"],
            path: "Tests/ApexKeychainStoreTests"),
        .testTarget(
            name: "CLITests", dependencies: ["apex-keychain"],
            path: "Tests/CLITests"),
        .testTarget(
            name: "SystemLibraryTests", dependencies: ["CSQLite", "CSodium", "CLibXML2"],
            path: "Tests/SystemLibraryTests"),
    ],
    swiftLanguageModes: [.v6]
)
