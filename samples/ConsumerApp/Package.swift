// swift-tools-version:6.0
// An app outside ApexKeychain that runs the start-up migration: it depends on the package's library products by
// name, as any other package would. Build it with `swift build --package-path samples/ConsumerApp` from the
// repository's root; scripts/consumer-app (a step of scripts/test) builds and runs it. From `import` down, this
// file is docs/LIBRARY.md's "Add the package" block, line for line (LibraryGuideTests compares them).
import PackageDescription

let package = Package(
    name: "ConsumerApp",
    dependencies: [
        // ApexKeychain's folder, here the repository's root. A path dependency's identity is its folder's name,
        // which a clone may choose: `name:` fixes the name the products are looked up in. From a URL no name is
        // needed; until a release is tagged, `from:` finds no version: use a branch, or a commit with `revision:`,
        // `.package(url: "<ApexKeychain repository URL>", branch: "main")`.
        .package(name: "ApexKeychain", path: "../..")
    ],
    targets: [
        .executableTarget(
            name: "ConsumerApp",
            dependencies: [
                // The products the app uses: the core, the store, the dump readers, the migration, and one
                // importer per library the app used before.
                .product(name: "ApexKeychain", package: "ApexKeychain"),
                .product(name: "ApexKeychainStore", package: "ApexKeychain"),
                .product(name: "ApexDumps", package: "ApexKeychain"),
                .product(name: "ApexMigration", package: "ApexKeychain"),
                .product(name: "ReactNativeKeychainImporter", package: "ApexKeychain"),
                .product(name: "ExpoSecureStoreImporter", package: "ApexKeychain"),
                .product(name: "ReactNativeEncryptedStorageImporter", package: "ApexKeychain"),
            ])
    ],
    swiftLanguageModes: [.v6]
)
