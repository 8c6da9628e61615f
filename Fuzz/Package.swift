// swift-tools-version:6.0
// libFuzzer targets for the dump readers. Kept out of the main package: LLVMFuzzerRunDriver only links
// with the fuzzer flags. Build: swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld
import PackageDescription

let names = [
    "fuzz-plist", "fuzz-objection", "fuzz-shared-preferences", "fuzz-datastore",
    "fuzz-accc", "fuzz-sqlite", "fuzz-detect", "fuzz-backup",
]

let package = Package(
    name: "ApexFuzz",
    dependencies: [.package(name: "ApexKeychain", path: "..")],
    targets: [.target(name: "FuzzDriver", path: "Sources/FuzzDriver")]
        + names.map { name in
            .executableTarget(
                name: name,
                dependencies: ["FuzzDriver", .product(name: "ApexDumps", package: "ApexKeychain")],
                path: "Sources/\(name)")
        },
    swiftLanguageModes: [.v6]
)
