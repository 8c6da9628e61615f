// docs/LIBRARY.md, "Items: set, get, info, remove": from `import` down, this file is
// the guide's block, line for line (LibraryGuideTests compares them). Change both together.
import ApexKeychain
import ApexKeychainStore

/// Keeps an API token in the app's service, describes it, reads it and removes it.
func keepToken(_ token: String, in store: SQLiteKeychainDatabase) async throws(KeychainError) {
    let keychain = try Keychain(
        KeychainOptions(service: "com.example.app"), database: store, device: store.makeDevice())
    try await keychain.setItem("api-token", token, SetOptions(accessible: .whenUnlockedThisDeviceOnly, label: "API"))
    // Never prompts and never reads the value: the protection, the label and the dates.
    if let info = try await keychain.getItemInfo("api-token") {
        print(info.key, info.accessible, info.accessControl, info.label ?? "", info.modifiedAt)
    }
    let stored = try await keychain.getItem("api-token")  // nil when there is no item
    assert(stored == token)
    try await keychain.removeItem("api-token")  // a missing key is not an error
}
