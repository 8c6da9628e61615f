/// What can be known of an item without reading its value, and so without a prompt.
public struct ItemInfo: Sendable, Codable, Equatable {
    /// The key.
    public var key: String
    /// The label; nil when the item has none, `""` when its label is the empty string.
    public var label: String?
    /// When the item can be read.
    public var accessible: Accessible
    /// Who must be present to read it.
    public var accessControl: AccessControl
    /// Whether it syncs through iCloud Keychain.
    public var synchronizable: Bool
    /// When it was first written, in milliseconds since 1970.
    public var createdAt: Int64
    /// When it was last written, in milliseconds since 1970.
    public var modifiedAt: Int64
    /// Android only: where its key lives.
    public var android: AndroidItemInfo?

    /// Creates item info.
    public init(
        key: String, label: String?, accessible: Accessible, accessControl: AccessControl, synchronizable: Bool,
        createdAt: Int64, modifiedAt: Int64, android: AndroidItemInfo? = nil
    ) {
        self.key = key
        self.label = label
        self.accessible = accessible
        self.accessControl = accessControl
        self.synchronizable = synchronizable
        self.createdAt = createdAt
        self.modifiedAt = modifiedAt
        self.android = android
    }
}

/// Android facts about an item.
public struct AndroidItemInfo: Sendable, Codable, Equatable {
    /// Where the item's key lives.
    public var securityLevel: HardwareSecurityLevel

    /// Creates Android item info.
    public init(securityLevel: HardwareSecurityLevel) { self.securityLevel = securityLevel }
}
