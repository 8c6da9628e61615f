import ApexDumpModel
import ApexKeychain

/// What the user tells the importers.
public struct ImportOptions: Sendable, Equatable {
    /// The app's bundle identifier: react-native-keychain's default service on iOS, and the target service of
    /// items in a source's default service. When nil, importers infer it from the access group and say so.
    public var bundleID: String?
    /// Only these source services (as found) are migrated; nil means all.
    public var includeServices: ServiceNames?
    /// These source services (as found) are skipped.
    public var excludeServices: ServiceNames
    /// Source service (as found) → target service.
    public var serviceMap: ServiceMap
    /// react-native-keychain on Android: whether its biometric ciphers also accepted the device credential
    /// (version 10 did), mapping them to `biometryAnyOrPasscode` instead of `biometryAny`.
    public var androidBiometryAcceptsPasscode: Bool
    /// Only the items of these libraries are migrated; the others are found and listed as `skipped`. Nil: all.
    public var libraries: Set<SourceLibrary>?

    /// Creates options.
    public init(
        bundleID: String? = nil, includeServices: ServiceNames? = nil, excludeServices: ServiceNames = [],
        serviceMap: ServiceMap = [:], androidBiometryAcceptsPasscode: Bool = false, libraries: Set<SourceLibrary>? = nil
    ) {
        self.libraries = libraries
        self.bundleID = bundleID
        self.includeServices = includeServices
        self.excludeServices = excludeServices
        self.serviceMap = serviceMap
        self.androidBiometryAcceptsPasscode = androidBiometryAcceptsPasscode
    }
}

/// Why an importer could not read its data at all (a bad key file, say). The message never holds a secret.
public struct ImportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file concerned.
    public let path: String
    /// What is wrong.
    public let message: String

    /// Creates an error.
    public init(path: String, _ message: String) {
        self.path = path
        self.message = message
    }

    /// `path: message`.
    public var description: String { "\(path): \(message)" }
}

/// A plug-in that turns one library's raw records into ``SourceItem``s.
///
/// An importer claims the records it recognises and leaves the rest; it reads nothing but the dumps it is given
/// and writes nothing (the migration writes through the core). Every lossy or inferred step is a note.
public protocol Importer: Sendable {
    /// The library it reads.
    var library: SourceLibrary { get }

    /// The items of this library in `dumps`. Records it does not recognise are left out.
    /// - Throws: ``ImportError`` when its data can't be used at all (never for one odd item: that item is
    ///   reported instead).
    func importItems(from dumps: [Dump], options: ImportOptions) throws(ImportError) -> [SourceItem]
}
