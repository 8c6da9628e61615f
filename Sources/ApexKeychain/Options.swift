/// The text of a biometric or passcode prompt. Fields left nil fall back to the keychain's defaults, field by field.
public struct Prompt: Sendable, Codable, Equatable {
    /// The prompt's title: the reason shown with the prompt (iOS `localizedReason`, Android's title).
    public var title: String?
    /// A line under the title (Android); not used on iOS.
    public var subtitle: String?
    /// A longer explanation (Android); not used on iOS.
    public var description: String?
    /// The cancel button's text (iOS `localizedCancelTitle`; Android's negative button, for options without a
    /// passcode).
    public var cancel: String?
    /// The fallback button's text, shown after a failed scan (iOS `localizedFallbackTitle`): `""` hides the
    /// button; nil keeps the system's button and text. A tap ends a read of `biometryAny` or
    /// `biometryCurrentSet` with `USER_FALLBACK`; for the other options the fallback is the passcode. Not used
    /// on Android.
    public var fallback: String?
    /// Whether a passive biometric (a face) needs a tap to confirm (Android); nil means true. Not used on iOS.
    public var confirmationRequired: Bool?

    /// Creates a prompt; every field defaults to nil.
    public init(
        title: String? = nil, subtitle: String? = nil, description: String? = nil, cancel: String? = nil,
        fallback: String? = nil, confirmationRequired: Bool? = nil
    ) {
        self.title = title
        self.subtitle = subtitle
        self.description = description
        self.cancel = cancel
        self.fallback = fallback
        self.confirmationRequired = confirmationRequired
    }

    /// Decodes a prompt, refusing unknown fields with `INVALID_ARGUMENT`.
    public init(from decoder: any Decoder) throws {
        let c = try StrictContainer(
            decoder, type: "prompt",
            allowed: ["title", "subtitle", "description", "cancel", "fallback", "confirmationRequired"])
        self.init(
            title: try c.string("title"), subtitle: try c.string("subtitle"),
            description: try c.string("description"), cancel: try c.string("cancel"),
            fallback: try c.string("fallback"), confirmationRequired: try c.bool("confirmationRequired"))
    }

    /// This prompt with each nil field taken from `defaults`.
    public func merged(over defaults: Prompt?) -> Prompt {
        guard let defaults else { return self }
        return Prompt(
            title: title ?? defaults.title, subtitle: subtitle ?? defaults.subtitle,
            description: description ?? defaults.description, cancel: cancel ?? defaults.cancel,
            fallback: fallback ?? defaults.fallback,
            confirmationRequired: confirmationRequired ?? defaults.confirmationRequired)
    }
}

/// Android-only options; accepted and ignored on other platforms.
public struct AndroidOptions: Sendable, Codable, Equatable {
    /// Where the item's key lives.
    public var keyStorage: KeyStorage?

    /// Creates Android options.
    public init(keyStorage: KeyStorage? = nil) { self.keyStorage = keyStorage }

    /// Decodes Android options, refusing unknown fields and values with `INVALID_ARGUMENT`.
    public init(from decoder: any Decoder) throws {
        let c = try StrictContainer(decoder, type: "android", allowed: ["keyStorage"])
        self.init(keyStorage: try c.enumeration("keyStorage", KeyStorage.self))
    }
}

/// A keychain's defaults: its service, and the protection and prompt every call uses unless it says otherwise.
public struct KeychainOptions: Sendable, Codable, Equatable {
    /// The service; nil means the app's default service (its bundle identifier).
    public var service: String?
    /// Default ``Accessible`` of writes; nil means ``Accessible/afterFirstUnlock`` (``Keychain/defaultAccessible``).
    public var accessible: Accessible?
    /// Default ``AccessControl`` of writes; nil means ``AccessControl/none``.
    public var accessControl: AccessControl?
    /// Seconds one successful prompt keeps items of the same service and access control open; nil means 0.
    public var authValidity: Int?
    /// Default for writes: whether items sync through iCloud Keychain (iOS); nil means false.
    public var synchronizable: Bool?
    /// The access group (iOS); nil means the app's default group.
    public var accessGroup: String?
    /// Default prompt text.
    public var prompt: Prompt?
    /// Android defaults.
    public var android: AndroidOptions?

    /// Creates options; every field defaults to nil.
    public init(
        service: String? = nil, accessible: Accessible? = nil, accessControl: AccessControl? = nil,
        authValidity: Int? = nil, synchronizable: Bool? = nil, accessGroup: String? = nil, prompt: Prompt? = nil,
        android: AndroidOptions? = nil
    ) {
        self.service = service
        self.accessible = accessible
        self.accessControl = accessControl
        self.authValidity = authValidity
        self.synchronizable = synchronizable
        self.accessGroup = accessGroup
        self.prompt = prompt
        self.android = android
    }

    /// Decodes options from their JSON form, refusing unknown names and values with `INVALID_ARGUMENT`.
    public init(from decoder: any Decoder) throws {
        let c = try StrictContainer(
            decoder, type: "options",
            allowed: [
                "service", "accessible", "accessControl", "authValidity", "synchronizable", "accessGroup",
                "prompt", "android",
            ])
        self.init(
            service: try c.string("service"), accessible: try c.enumeration("accessible", Accessible.self),
            accessControl: try c.enumeration("accessControl", AccessControl.self),
            authValidity: try c.int("authValidity"), synchronizable: try c.bool("synchronizable"),
            accessGroup: try c.string("accessGroup"), prompt: try c.nested("prompt", Prompt.self),
            android: try c.nested("android", AndroidOptions.self))
    }
}

/// The protection of one write, and its label. Fields left nil take the keychain's defaults.
public struct SetOptions: Sendable, Codable, Equatable {
    /// When the item can be read.
    public var accessible: Accessible?
    /// Who must be present to read it.
    public var accessControl: AccessControl?
    /// Seconds one successful prompt keeps items of this service and access control open.
    public var authValidity: Int?
    /// Whether the item syncs through iCloud Keychain (iOS).
    public var synchronizable: Bool?
    /// Android options.
    public var android: AndroidOptions?
    /// The item's label; nil writes an item without one (removing any label it had).
    public var label: String?

    /// Creates options; every field defaults to nil.
    public init(
        accessible: Accessible? = nil, accessControl: AccessControl? = nil, authValidity: Int? = nil,
        synchronizable: Bool? = nil, android: AndroidOptions? = nil, label: String? = nil
    ) {
        self.accessible = accessible
        self.accessControl = accessControl
        self.authValidity = authValidity
        self.synchronizable = synchronizable
        self.android = android
        self.label = label
    }

    /// Decodes options from their JSON form, refusing unknown names and values with `INVALID_ARGUMENT`.
    public init(from decoder: any Decoder) throws {
        let c = try StrictContainer(
            decoder, type: "set options",
            allowed: ["accessible", "accessControl", "authValidity", "synchronizable", "android", "label"])
        self.init(
            accessible: try c.enumeration("accessible", Accessible.self),
            accessControl: try c.enumeration("accessControl", AccessControl.self),
            authValidity: try c.int("authValidity"), synchronizable: try c.bool("synchronizable"),
            android: try c.nested("android", AndroidOptions.self), label: try c.string("label"))
    }
}

/// Options of one read.
public struct GetOptions: Sendable, Codable, Equatable {
    /// Prompt text for this read, merged field by field over the keychain's.
    public var prompt: Prompt?

    /// Creates read options.
    public init(prompt: Prompt? = nil) { self.prompt = prompt }

    /// Decodes options from their JSON form, refusing unknown names with `INVALID_ARGUMENT`.
    public init(from decoder: any Decoder) throws {
        let c = try StrictContainer(decoder, type: "get options", allowed: ["prompt"])
        self.init(prompt: try c.nested("prompt", Prompt.self))
    }
}

/// A username and a password, stored as one item whose label is the username.
public struct Credentials: Sendable, Codable, Equatable {
    /// The username (non-empty); kept as the item's label.
    public var username: String
    /// The password (may be empty); the item's value.
    public var password: String

    /// Creates credentials.
    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    /// Decodes credentials from their JSON form. A missing field, a field that isn't text (a lone surrogate
    /// has no UTF-8 form) or an unknown name is `INVALID_ARGUMENT`; the message never holds the field's text.
    public init(from decoder: any Decoder) throws {
        let c = try StrictContainer(decoder, type: "credentials", allowed: ["username", "password"])
        guard let username = try c.string("username") else {
            throw KeychainError.invalid("credentials.username is missing")
        }
        guard let password = try c.string("password") else {
            throw KeychainError.invalid("credentials.password is missing")
        }
        self.init(username: username, password: password)
    }
}

/// Options of a credentials write: ``SetOptions`` without the label (the username is the label), plus a server.
public struct CredentialsOptions: Sendable, Codable, Equatable {
    /// The server: the item's key is `credentials:<server>`, or `credentials` when nil.
    public var server: String?
    /// When the item can be read.
    public var accessible: Accessible?
    /// Who must be present to read it.
    public var accessControl: AccessControl?
    /// Seconds one successful prompt keeps items of this service and access control open.
    public var authValidity: Int?
    /// Whether the item syncs through iCloud Keychain (iOS).
    public var synchronizable: Bool?
    /// Android options.
    public var android: AndroidOptions?

    /// Creates options; every field defaults to nil.
    public init(
        server: String? = nil, accessible: Accessible? = nil, accessControl: AccessControl? = nil,
        authValidity: Int? = nil, synchronizable: Bool? = nil, android: AndroidOptions? = nil
    ) {
        self.server = server
        self.accessible = accessible
        self.accessControl = accessControl
        self.authValidity = authValidity
        self.synchronizable = synchronizable
        self.android = android
    }

    /// Decodes options from their JSON form, refusing unknown names and values with `INVALID_ARGUMENT`.
    public init(from decoder: any Decoder) throws {
        let c = try StrictContainer(
            decoder, type: "credentials options",
            allowed: ["server", "accessible", "accessControl", "authValidity", "synchronizable", "android"])
        self.init(
            server: try c.string("server"), accessible: try c.enumeration("accessible", Accessible.self),
            accessControl: try c.enumeration("accessControl", AccessControl.self),
            authValidity: try c.int("authValidity"), synchronizable: try c.bool("synchronizable"),
            android: try c.nested("android", AndroidOptions.self))
    }

    var setOptions: SetOptions {
        SetOptions(
            accessible: accessible, accessControl: accessControl, authValidity: authValidity,
            synchronizable: synchronizable, android: android)
    }
}

/// Options of a credentials read or removal.
public struct CredentialsGetOptions: Sendable, Codable, Equatable {
    /// The server: the item's key is `credentials:<server>`, or `credentials` when nil.
    public var server: String?
    /// Prompt text for this read, merged field by field over the keychain's.
    public var prompt: Prompt?

    /// Creates options.
    public init(server: String? = nil, prompt: Prompt? = nil) {
        self.server = server
        self.prompt = prompt
    }

    /// Decodes options from their JSON form, refusing unknown names with `INVALID_ARGUMENT`.
    public init(from decoder: any Decoder) throws {
        let c = try StrictContainer(decoder, type: "credentials get options", allowed: ["server", "prompt"])
        self.init(server: try c.string("server"), prompt: try c.nested("prompt", Prompt.self))
    }
}
