import ApexKeychain
import ApexMigration
import Foundation

/// A `FacebookConceal` service decrypted: its credentials, or why they can't be read or used.
struct ConcealEntry {
    /// The credentials, the bytes as found, or why the value is sealed.
    var value: SourceValue
    /// The decrypted username, when it is text.
    var account: String?
    /// Notes on the decryption (the entity spelling).
    var notes: [String] = []
    /// Why the decrypted value can't be credentials, or nil.
    var problem: String?
    /// Whether the value could be decrypted with what the run was not given (a key file, the right one, or a
    /// machine with AES-256-GCM): the item waits for it. A tag that fails where the key opens the file's other
    /// entries is damage, sealed for good (``AndroidImport``).
    var needsInput = false

    /// Why a value whose GCM tag does not verify is sealed.
    static let tagMismatch =
        "FacebookConceal: the GCM tag does not verify with the key of crypto.KEY_256.xml under either entity spelling (another app's key file, or damaged data)"

    /// Decrypts the `:u` and `:p` entries (Base64, whitespace ignored) of `service` with the keyring's keys,
    /// trying both entity spellings.
    static func open(username: String, password: String, service: String, keyring: ConcealKeyring) -> ConcealEntry {
        var blobs: [[UInt8]] = []
        for (text, field) in [(username, "username"), (password, "password")] {
            guard let data = base64IgnoringWhitespace(text) else {
                return ConcealEntry(value: .sealed("the FacebookConceal \(field) entry is not valid Base64"))
            }
            let blob = [UInt8](data)
            if let problem = Conceal.formatProblem(blob, what: "\(field) entry") {
                return ConcealEntry(value: .sealed(problem))
            }
            blobs.append(blob)
        }
        if keyring.keys.isEmpty { return ConcealEntry(value: .sealed(keyring.missingReason), needsInput: true) }
        guard Conceal.isAvailable else {
            return ConcealEntry(
                value: .sealed(
                    "this machine's libsodium has no AES-256-GCM (it needs AES-NI or ARMv8 crypto instructions), so FacebookConceal values can't be decrypted here"
                ), needsInput: true)
        }
        guard let (user, userSpelling) = Conceal.open(blobs[0], keys: keyring.keys, service: service, field: .user),
            let (pass, passSpelling) = Conceal.open(blobs[1], keys: keyring.keys, service: service, field: .pass)
        else {
            return ConcealEntry(value: .sealed(Self.tagMismatch), needsInput: true)
        }
        var entry = ConcealEntry(value: .sealed(""))
        entry.notes.append(
            "FacebookConceal, decrypted with the key of crypto.KEY_256.xml; react-native-keychain 10 can no longer read this entry"
        )
        if userSpelling == .spaced || passSpelling == .spaced {
            entry.notes.append(
                "encrypted with the entity spelling of react-native-keychain 9.0.0 to 9.2.2 ('RN_KEYCHAIN:<service> user'), which 9.2.3 and later can't read"
            )
        }
        entry.finish(username: user, password: pass)
        return entry
    }

    /// The credentials, or the password's bytes and why they can't be credentials. The buffers are wiped when
    /// released.
    private mutating func finish(username: SecretBytes, password: SecretBytes) {
        let name = String(validUTF8: username.bytes)
        account = name
        guard let secret = String(validUTF8: password.bytes) else {
            value = .value(Data(password.bytes))
            problem = "the decrypted password is not valid UTF-8, so it can't be a credentials password"
            return
        }
        if secret.utf8.contains(0) {
            value = .value(Data(password.bytes))
            problem = "the decrypted password contains U+0000, which a credentials password can't hold"
            return
        }
        guard let name else {
            value = .value(Data(password.bytes))
            problem = "the decrypted username is not valid UTF-8"
            return
        }
        if name.isEmpty || name.utf8.contains(0) {
            value = .value(Data(password.bytes))
            problem =
                name.isEmpty
                ? "the decrypted username is empty; the package's credentials need one"
                : "the decrypted username contains U+0000, which a username can't hold"
            return
        }
        value = .credentials(username: name, password: secret)
    }
}
