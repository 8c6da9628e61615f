// swift-tools-version:6.0
// An app outside ApexKeychain that runs the start-up migration: it depends on the package's library products by
// name, as any other package would. Build it with `swift build --package-path samples/ConsumerApp` from the
// repository's root; scripts/consumer-app (a step of scripts/test) builds and runs it.
import PackageDescription

let package = Package(
    name: "ConsumerApp",
    dependencies: [
        // The repository's root. A path dependency's identity is its folder's name, which a clone may choose:
        // `name:` fixes the name the products below are looked up in. (From a URL the identity is the last path
        // component, `ApexKeychain`, and no name is needed.)
        .package(name: "ApexKeychain", path: "../..")
    ],
    targets: [
        .executableTarget(
            name: "ConsumerApp",
            dependencies: [
                .product(name: "ApexKeychain", package: "ApexKeychain"),
                .product(name: "ApexDumps", package: "ApexKeychain"),
                .product(name: "ApexMigration", package: "ApexKeychain"),
                .product(name: "ReactNativeKeychainImporter", package: "ApexKeychain"),
                .product(name: "ExpoSecureStoreImporter", package: "ApexKeychain"),
                .product(name: "ReactNativeEncryptedStorageImporter", package: "ApexKeychain"),
            ])
    ],
    swiftLanguageModes: [.v6]
)
