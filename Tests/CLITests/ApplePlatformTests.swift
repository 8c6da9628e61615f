import Foundation
import Testing

/// What an iOS app adds (the core, `ApexKeychainApple`, `ApexMigration` and the four importers) must build on Apple
/// platforms with no pkg-config system library (issue 30). Nothing here builds for Apple: these tests read
/// `Package.swift` and the targets' files, so that a dependency or an import that would need libsodium, libxml2 or
/// a pkg-config SQLite on a device fails here, on Linux, naming the target and the path to the library.
@Suite("Package.swift: the on-device products reach no pkg-config library on Apple platforms")
struct ApplePlatformTests {
    /// The products an app adds to run the start-up migration on a device.
    static let onDevice = [
        "ApexKeychain", "ApexKeychainApple", "ApexMigration", "ReactNativeKeychainImporter",
        "ExpoSecureStoreImporter", "ReactNativeSensitiveInfoImporter", "ReactNativeEncryptedStorageImporter",
    ]

    @Test("no on-device target reaches a pkg-config system library but through `.when(platforms: [.linux])`")
    func noSystemLibraryOnApple() throws {
        let graph = DependencyGraph(try Repository.text("Package.swift"))
        #expect(graph.targets.count > 10, "Package.swift read: \(graph.targets.keys.sorted())")
        #expect(graph.problems(from: Self.onDevice).isEmpty, "\(graph.problems(from: Self.onDevice))")
        // What an app builds on a device, and what only Linux builds under it.
        let apple = graph.reached(from: Self.onDevice, onApple: true)
        #expect(apple.isSuperset(of: ["ApexDumpModel", "ApexCrypto"]), "\(apple.sorted())")
        #expect(apple.isDisjoint(with: ["ApexDumps", "ApexSodium", "ApexSQLite", "CSodium", "CSQLite", "CLibXML2"]))
        #expect(graph.reached(from: Self.onDevice, onApple: false).isSuperset(of: ["ApexSodium", "CSodium"]))
    }

    @Test("no file of an on-device target imports a C module, ApexSodium or Synchronization unconditionally")
    func noUnconditionalImports() throws {
        let graph = DependencyGraph(try Repository.text("Package.swift"))
        let forbidden = graph.linuxOnlyModules(from: Self.onDevice).union(["Synchronization"])
        #expect(forbidden.isSuperset(of: ["ApexSodium", "CSodium", "CSQLite", "CLibXML2", "CGlibc"]), "\(forbidden)")
        let files = try Self.onDeviceFiles(graph)
        #expect(files.count > 60, "\(files.count) files read")
        let problems = files.flatMap { path, text in
            ImportScan.problems(in: text, forbidden: forbidden).map { "\(path): \($0)" }
        }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    /// Every Swift file of the on-device targets and the targets they reach on Apple platforms, by path.
    static func onDeviceFiles(_ graph: DependencyGraph) throws -> [(path: String, text: String)] {
        var files: [(path: String, text: String)] = []
        for name in graph.reached(from: Self.onDevice, onApple: true).union(Self.onDevice).sorted() {
            guard let target = graph.targets[name], target.kind != .systemLibrary, let path = target.path else {
                continue
            }
            let folder = Repository.root.appendingPathComponent(path)
            let walker = try #require(FileManager.default.enumerator(atPath: folder.path))
            while let file = walker.nextObject() as? String {
                guard file.hasSuffix(".swift") else { continue }
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                files.append(("\(path)/\(file)", text))
            }
        }
        return files
    }

    @Test("Package.swift declares the specification's floor: iOS 15.1 (seed 003) and macOS 12")
    func platformsAreTheFloor() throws {
        let code = PackageManifest.withoutComments(try Repository.text("Package.swift"))
        let package = try #require(PackageManifest.calls("Package(", in: code).first)
        let platforms = try #require(PackageManifest.listArgument("platforms", in: package))
        #expect(platforms.filter { !$0.isWhitespace } == #".iOS("15.1"),.macOS(.v12)"#, "\(platforms)")
    }

    @Test("no on-device file uses an API above the floor: Duration, the clocks, String(validating:as:)")
    func noAPIAboveTheFloor() throws {
        let files = try Self.onDeviceFiles(DependencyGraph(try Repository.text("Package.swift")))
        #expect(files.count > 60, "\(files.count) files read")
        let problems = files.flatMap { path, text in FloorScan.problems(in: text).map { "\(path): \($0)" } }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("the floor scan finds the APIs in code, not in comments or in longer names")
    func floorScanIsExact() {
        let text = """
            /// Not `Duration` or `ContinuousClock` here (a comment).
            let budget: Duration = .milliseconds(50)  // Duration
            let clock = ContinuousClock()
            let batchDuration = 1, SuspendingClocks = 2
            let text = String(validating: bytes, as: UTF8.self)
            import Synchronization
            """
        #expect(
            FloorScan.problems(in: text) == [
                "line 2 uses `Duration` (iOS 16, macOS 13)",
                "line 3 uses `ContinuousClock` (iOS 16, macOS 13)",
                "line 5 uses `String(validating:` (iOS 18, macOS 15)",
                "line 6 uses `import Synchronization` (iOS 18, macOS 15)",
            ])
    }

    // MARK: The checks themselves

    static let smallManifest = """
        let package = Package(
            name: "Small",
            targets: [
                .systemLibrary(name: "CSodium", path: "Sources/CSodium", pkgConfig: "libsodium"),
                .systemLibrary(name: "CGlibc", path: "Sources/CGlibc"),
                .target(name: "Sodium", dependencies: ["CSodium"], path: "Sources/Sodium"),
                .target(
                    name: "Crypto", dependencies: [.target(name: "Sodium", condition: .when(platforms: [.linux]))],
                    path: "Sources/Crypto"),
                .target(name: "Core", dependencies: ["Crypto", "CGlibc"], path: "Sources/Core"),
                .target(name: "Leaky", dependencies: ["Core", "Sodium"], path: "Sources/Leaky"),
                .target(
                    name: "Mac", dependencies: [.target(name: "Sodium", condition: .when(platforms: [.linux, .macOS]))],
                    path: "Sources/Mac"),
                .testTarget(
                    name: "CryptoTests",
                    dependencies: ["Crypto", .target(name: "Sodium", condition: .when(platforms: [.linux]))],
                    path: "Tests/CryptoTests"),
            ]
        )
        """

    @Test("a Linux-conditioned dependency is left out on Apple; a plain one, or one for macOS too, is a problem")
    func graphIsRead() {
        let graph = DependencyGraph(Self.smallManifest)
        #expect(graph.targets["Crypto"]?.dependencies == [.init(name: "Sodium", linuxOnly: true)])
        #expect(graph.targets["Sodium"]?.path == "Sources/Sodium", "the declaration, not the test's dependency")
        #expect(graph.targets["CSodium"]?.pkgConfig == true)
        #expect(graph.targets["CGlibc"]?.pkgConfig == false)
        #expect(graph.problems(from: ["Core"]).isEmpty)
        #expect(graph.reached(from: ["Core"], onApple: true) == ["Crypto", "CGlibc"])
        #expect(
            graph.problems(from: ["Leaky"]) == [
                "`Leaky` reaches the pkg-config library `CSodium` on Apple platforms: Leaky → Sodium → CSodium"
            ])
        #expect(
            graph.problems(from: ["Mac"]) == [
                "`Mac` reaches the pkg-config library `CSodium` on Apple platforms: Mac → Sodium → CSodium"
            ])
        #expect(graph.linuxOnlyModules(from: ["Core"]) == ["Sodium", "CSodium", "CGlibc"])
    }

    @Test("an import is allowed only in an `#if canImport(M)` or `#if os(Linux)` branch of its own")
    func importsAreScanned() {
        let forbidden: Set = ["CSodium", "ApexSodium", "Synchronization"]
        let good = """
            #if canImport(CryptoKit)
                import CryptoKit
            #elseif canImport(ApexSodium)
                import ApexSodium
            #endif
            #if os(Linux)
                import CSodium
            #endif
            import Foundation
            """
        #expect(ImportScan.problems(in: good, forbidden: forbidden).isEmpty)
        let bad = """
            import ApexSodium
            #if canImport(CryptoKit)
                import CryptoKit
            #else
                import CSodium
            #endif
            #if canImport(Synchronization)
                import Synchronization
            #endif
            @preconcurrency import CSodium
            """
        #expect(
            ImportScan.problems(in: bad, forbidden: forbidden) == [
                "line 1 imports `ApexSodium` unconditionally",
                "line 5 imports `CSodium` unconditionally",
                "line 8 imports `Synchronization` (Mutex and Atomic need iOS 18 and macOS 15)",
                "line 10 imports `CSodium` unconditionally",
            ])
    }
}

/// The targets of `Package.swift` and their dependencies with their platform conditions, read with
/// `PackageManifest`'s helpers (ArchitectureMapTests.swift). A dependency is a string literal, or
/// `.target(name:condition:)`; the only condition it understands is `.when(platforms: [.linux])`: any other is
/// taken as applying on Apple platforms too.
struct DependencyGraph {
    struct Dependency: Equatable {
        var name: String
        /// Whether the dependency's condition is exactly `.when(platforms: [.linux])`.
        var linuxOnly: Bool
    }

    struct Target {
        var name: String
        var kind: PackageManifest.Target.Kind
        var dependencies: [Dependency]
        var path: String?
        /// Whether it is a system library found through pkg-config.
        var pkgConfig: Bool
    }

    var targets: [String: Target] = [:]

    init(_ manifest: String) {
        let code = PackageManifest.withoutComments(manifest)
        let kinds: [(String, PackageManifest.Target.Kind)] = [
            (".target(", .regular), (".executableTarget(", .executable), (".testTarget(", .test),
            (".systemLibrary(", .systemLibrary),
        ]
        for (opening, kind) in kinds {
            for body in PackageManifest.calls(opening, in: code) {
                guard let name = PackageManifest.stringArgument("name", in: body) else { continue }
                let path = PackageManifest.stringArgument("path", in: body)
                // A `.target(name:condition:)` inside a test target's dependencies is no declaration: it has no path.
                if targets[name]?.path != nil, path == nil { continue }
                let list = PackageManifest.listArgument("dependencies", in: body) ?? ""
                targets[name] = Target(
                    name: name, kind: kind, dependencies: Self.elements(list).compactMap(Self.dependency),
                    path: path, pkgConfig: PackageManifest.topLevelLabel("pkgConfig", in: body) != nil)
            }
        }
    }

    /// The top-level elements of an array literal's contents.
    static func elements(_ list: Substring) -> [Substring] {
        var elements: [Substring] = []
        var depth = 0
        var inString = false
        var start = list.startIndex
        for index in list.indices {
            let character = list[index]
            if character == "\"" { inString.toggle() }
            guard !inString else { continue }
            switch character {
            case "(", "[": depth += 1
            case ")", "]": depth -= 1
            case "," where depth == 0:
                elements.append(list[start..<index])
                start = list.index(after: index)
            default: break
            }
        }
        elements.append(list[start...])
        return elements.map { $0.trimmingCharacters(in: .whitespacesAndNewlines)[...] }.filter { !$0.isEmpty }
    }

    static func dependency(_ element: Substring) -> Dependency? {
        if element.hasPrefix("\"") {
            return Dependency(name: String(element.dropFirst().prefix { $0 != "\"" }), linuxOnly: false)
        }
        guard element.hasPrefix(".target("), let body = PackageManifest.calls(".target(", in: String(element)).first,
            let name = PackageManifest.stringArgument("name", in: body)
        else { return nil }
        let condition = body.range(of: "condition:").map { body[$0.upperBound...].filter { !$0.isWhitespace } }
        return Dependency(name: name, linuxOnly: condition == ".when(platforms:[.linux])")
    }

    /// Every target `roots` reach, on Apple platforms (leaving Linux-only dependencies out) or on Linux.
    func reached(from roots: [String], onApple: Bool) -> Set<String> {
        Set(paths(from: roots, onApple: onApple).keys).subtracting(roots)
    }

    /// The modules `roots` reach on Linux only: what a file of theirs may import only under a condition.
    func linuxOnlyModules(from roots: [String]) -> Set<String> {
        let systemLibraries = targets.values.filter { $0.kind == .systemLibrary }.map(\.name)
        return reached(from: roots, onApple: false).subtracting(reached(from: roots, onApple: true))
            .union(systemLibraries)
    }

    /// Each pkg-config system library a root reaches on Apple platforms, with the path to it.
    func problems(from roots: [String]) -> [String] {
        roots.flatMap { root in
            paths(from: [root], onApple: true).filter { targets[$0.key]?.pkgConfig == true }.sorted { $0.key < $1.key }
                .map {
                    "`\(root)` reaches the pkg-config library `\($0.key)` on Apple platforms: \($0.value.joined(separator: " → "))"
                }
        }
    }

    /// The shortest path from a root to each target reached (breadth first).
    private func paths(from roots: [String], onApple: Bool) -> [String: [String]] {
        var paths = Dictionary(uniqueKeysWithValues: roots.map { ($0, [$0]) })
        var queue = roots
        while !queue.isEmpty {
            let name = queue.removeFirst()
            for dependency in targets[name]?.dependencies ?? [] where !(onApple && dependency.linuxOnly) {
                guard paths[dependency.name] == nil else { continue }
                paths[dependency.name] = paths[name, default: []] + [dependency.name]
                queue.append(dependency.name)
            }
        }
        return paths
    }
}

/// The `import` lines of a Swift file and the `#if` branches around them.
enum ImportScan {
    /// Each import of a `forbidden` module outside a branch whose own condition is `canImport(M)` or `os(Linux)`;
    /// `Synchronization` anywhere (no condition makes it available on the package's floor).
    static func problems(in text: String, forbidden: Set<String>) -> [String] {
        var branches: [String] = []
        var problems: [String] = []
        for (offset, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#if ") {
                branches.append(String(line.dropFirst(4)))
            } else if line.hasPrefix("#elseif ") {
                branches[branches.count - 1] = String(line.dropFirst(8))
            } else if line.hasPrefix("#else") {
                branches[branches.count - 1] = ""
            } else if line.hasPrefix("#endif") {
                branches.removeLast()
            }
            let words = line.split(separator: " ")
            guard let index = words.firstIndex(of: "import"), words[..<index].allSatisfy({ $0.hasPrefix("@") }),
                index + 1 < words.count
            else { continue }
            let module = String(words[index + 1])
            guard forbidden.contains(module) else { continue }
            if module == "Synchronization" {
                problems.append(
                    "line \(offset + 1) imports `Synchronization` (Mutex and Atomic need iOS 18 and macOS 15)")
            } else if !branches.contains(where: { $0.contains("canImport(\(module))") || $0.contains("os(Linux)") }) {
                problems.append("line \(offset + 1) imports `\(module)` unconditionally")
            }
        }
        return problems
    }
}

/// The APIs above the package's floor (iOS 15.1, macOS 12) that an on-device file must not use, found in code
/// (a line's `//` comment left out) as whole words.
enum FloorScan {
    static let apis: [(name: String, needs: String)] = [
        ("Duration", "iOS 16, macOS 13"), ("ContinuousClock", "iOS 16, macOS 13"),
        ("SuspendingClock", "iOS 16, macOS 13"), ("String(validating:", "iOS 18, macOS 15"),
        ("import Synchronization", "iOS 18, macOS 15"),
    ]

    static func problems(in text: String) -> [String] {
        var problems: [String] = []
        for (offset, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let code = raw.range(of: "//").map { raw[..<$0.lowerBound] } ?? raw[...]
            for api in apis where contains(code, word: api.name) {
                problems.append("line \(offset + 1) uses `\(api.name)` (\(api.needs))")
            }
        }
        return problems
    }

    /// Whether `name` occurs in `code` with no identifier character right before or after it.
    static func contains(_ code: Substring, word name: String) -> Bool {
        var rest = code[...]
        while let found = rest.range(of: name) {
            let before = found.lowerBound == code.startIndex ? nil : code[code.index(before: found.lowerBound)]
            let after = found.upperBound == code.endIndex ? nil : code[found.upperBound]
            let isPart = { (c: Character?) in c.map { $0.isLetter || $0.isNumber || $0 == "_" } ?? false }
            if !isPart(before), !isPart(after) || name.hasSuffix(":") { return true }
            rest = code[found.upperBound...]
        }
        return false
    }
}
