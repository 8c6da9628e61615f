import ApexKeychain

/// Services named by the user, compared byte for byte as the keychain compares them: "café" in NFC and in NFD
/// are two services (a `Set<String>` would make them one).
public struct ServiceNames: Sendable, Equatable, ExpressibleByArrayLiteral {
    private var names: Set<ExactName>

    /// The services given.
    public init(_ services: some Sequence<String>) { names = Set(services.map(ExactName.init(_:))) }

    /// The services of the literal.
    public init(arrayLiteral services: String...) { self.init(services) }

    /// Whether `service` is one of them, byte for byte.
    public func contains(_ service: String) -> Bool { names.contains(ExactName(service)) }

    /// Adds a service.
    public mutating func insert(_ service: String) { names.insert(ExactName(service)) }

    /// How many services.
    public var count: Int { names.count }
}

/// Source service (as found) → target service, looked up byte for byte.
public struct ServiceMap: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    /// Each source service, as given, and its target.
    private var targets: [ExactName: (source: String, target: String)] = [:]

    /// An empty map.
    public init() {}

    /// The pairs of the literal; a later pair for the same source service wins.
    public init(dictionaryLiteral pairs: (String, String)...) {
        for (source, target) in pairs { self[source] = target }
    }

    /// The target service of a source service, byte for byte; nil when the map doesn't name it.
    public subscript(_ source: String) -> String? {
        get { targets[ExactName(source)]?.target }
        set { targets[ExactName(source)] = newValue.map { (source, $0) } }
    }

    /// The source services it names, as given, sorted.
    public var sources: [String] { targets.values.map(\.source).sorted() }

    /// Whether the map names no service.
    public var isEmpty: Bool { targets.isEmpty }

    /// The source services it names that none of `found` is, byte for byte (almost always a typo), sorted.
    public func unmatched(by found: some Sequence<String>) -> [String] {
        let present = Set(found.map(ExactName.init(_:)))
        return targets.filter { !present.contains($0.key) }.map(\.value.source).sorted()
    }

    /// Whether the two maps name the same source services, byte for byte, with the same targets.
    public static func == (a: ServiceMap, b: ServiceMap) -> Bool {
        a.targets.count == b.targets.count
            && a.targets.allSatisfy { key, value in
                b.targets[key].map { ExactName($0.target) == ExactName(value.target) } ?? false
            }
    }
}
