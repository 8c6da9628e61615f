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
    private var targets: [ExactName: String] = [:]

    /// An empty map.
    public init() {}

    /// The pairs of the literal; a later pair for the same source service wins.
    public init(dictionaryLiteral pairs: (String, String)...) {
        for (source, target) in pairs { targets[ExactName(source)] = target }
    }

    /// The target service of a source service, byte for byte; nil when the map doesn't name it.
    public subscript(_ source: String) -> String? {
        get { targets[ExactName(source)] }
        set { targets[ExactName(source)] = newValue }
    }

    /// Whether the map names no service.
    public var isEmpty: Bool { targets.isEmpty }
}
