// docs/LIBRARY.md, "Protection: `accessible` and `accessControl`":
// from `import` down, this file is the guide's block, line for line (LibraryGuideTests compares them).
// Change both together.
import ApexKeychain
import ApexKeychainStore
import Foundation

/// Keeps a value that only someone who knows the store's passphrase can read back. Returns false when the store's
/// device has no passcode (a store with a key file).
func keepBehindPasscode(
    _ value: String, in store: SQLiteKeychainDatabase, passphrase: Data
) async throws(KeychainError) -> Bool {
    let device = store.makeDevice(passcode: .given(passphrase))
    guard try await canUseAccessControl(.passcode, device: device).available else { return false }
    let keychain = try Keychain(KeychainOptions(service: "com.example.vault"), database: store, device: device)
    try await keychain.setItem(
        "vault-key", value, SetOptions(accessible: .whenPasscodeSetThisDeviceOnly, accessControl: .passcode))
    // The read asks the device for the passcode: here the passphrase given above; with `.terminal`, a prompt.
    let read = try await keychain.getItem("vault-key", GetOptions(prompt: Prompt(title: "Unlock the vault")))
    return read == value
}
