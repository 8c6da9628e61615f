// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "ApexKeychain",
    products: [
        .library(name: "ApexKeychain", targets: ["ApexKeychain"]),
        .executable(name: "apex-keychain-demo", targets: ["apex-keychain-demo"]),
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
        .executableTarget(
            name: "apex-keychain-demo", dependencies: ["ApexKeychain"],
            path: "Sources/apex-keychain-demo"),

        .testTarget(
            name: "ApexKeychainTests", dependencies: ["ApexKeychain"],
            path: "Tests/ApexKeychainTests"),
        .testTarget(
            name: "SystemLibraryTests", dependencies: ["CSQLite", "CSodium", "CLibXML2"],
            path: "Tests/SystemLibraryTests"),
    ],
    swiftLanguageModes: [.v6]
)
