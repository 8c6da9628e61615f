// store-writer: a child process for the store's crash-consistency and multi-process tests.
//
//   store-writer --store PATH --key-file K --seed S --count N [--keys M] [--prefix P] [--service NAME]
//                [--access-control alternate|none|biometryAny|…]
//
// Opens the store (created beforehand by the test, device profile `ios` so that access-controlled writes are
// possible), prints `ready`, then for i in 0..<N writes key `<P><i % M>` (P defaults to `k`, M to N) with the
// value `v<i>-<S>` through `Keychain.setItem`, and prints `ok <i>` once the write has returned. Every line is
// written straight to the file descriptor, so a line seen by the parent is a write that completed.
//
// `alternate` (the default) switches each key between accessControl none (an in-place replace) and biometryAny
// (a staged write) from round to round: write i uses none when (i / M + i % M) is even.
//
// Exit status: 0 when all N writes are done, 1 for bad arguments, 2 when the store can't be opened, 3 when a
// write fails (the error is printed on stderr).
//
//   store-writer --store PATH --key-file K --migrate DUMP|store --batch B [--kill-at E]
//
// Migrates expo-secure-store items into the store (device profile `ios`) in batches of B items: from the dump
// file DUMP, or with `store` from other libraries' items already in the store, removing each source once its
// target is verified (the on-device migration). It counts events, the start of each write call and the commit
// of each batch's transaction, and with --kill-at sends itself SIGKILL as event E begins (a write) or right
// after it (a commit). A run that ends prints `events <count>` and `verified <n>`; exit 4 when the run fails.

import ApexKeychain
import ApexKeychainStore
import Foundation

func fail(_ status: Int32, _ message: String) -> Never {
    FileHandle.standardError.write(Data("store-writer: \(message)\n".utf8))
    exit(status)
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

var options: [String: String] = [:]
var arguments = ProcessInfo.processInfo.arguments.dropFirst()
while let name = arguments.popFirst() {
    guard name.hasPrefix("--"), let value = arguments.popFirst() else { fail(1, "bad argument '\(name)'") }
    options[String(name.dropFirst(2))] = value
}
let known: Set = [
    "store", "key-file", "seed", "count", "keys", "prefix", "service", "access-control", "migrate", "batch", "kill-at",
]
if let unknown = options.keys.first(where: { !known.contains($0) }) { fail(1, "unknown option --\(unknown)") }
guard let storePath = options["store"], let keyFilePath = options["key-file"] else {
    fail(1, "usage: store-writer --store PATH --key-file K --seed S --count N [--keys M]")
}
if let source = options["migrate"] {
    guard let batch = Int(options["batch"] ?? ""), batch > 0 else { fail(1, "--migrate needs --batch N") }
    let killAt = options["kill-at"].flatMap { Int($0) }
    await migrate(store: storePath, keyFile: keyFilePath, source: source, batch: batch, killAt: killAt)
    exit(0)
}
guard let seed = Int(options["seed"] ?? "0"), let count = Int(options["count"] ?? ""), count >= 0 else {
    fail(1, "--seed and --count must be whole numbers")
}
guard let keys = Int(options["keys"] ?? String(max(count, 1))), keys > 0 else { fail(1, "--keys must be positive") }
let prefix = options["prefix"] ?? "k"
let mode = options["access-control"] ?? "alternate"
if mode != "alternate", AccessControl(rawValue: mode) == nil { fail(1, "unknown access control '\(mode)'") }

let database: SQLiteKeychainDatabase
do {
    database = try SQLiteKeychainDatabase(
        opening: URL(fileURLWithPath: storePath), key: .keyFile(URL(fileURLWithPath: keyFilePath)))
} catch {
    fail(2, "\(error)")
}
let keychain: Keychain
do {
    keychain = try Keychain(
        KeychainOptions(service: options["service"] ?? "crash"), database: database,
        device: database.makeDevice(passcode: .none))
} catch {
    fail(2, "\(error)")
}
say("ready")

for i in 0..<count {
    let accessControl: AccessControl =
        AccessControl(rawValue: mode) ?? ((i / keys + i % keys) % 2 == 0 ? .none : .biometryAny)
    do {
        try await keychain.setItem("\(prefix)\(i % keys)", "v\(i)-\(seed)", SetOptions(accessControl: accessControl))
    } catch {
        fail(3, "write \(i) failed: \(error)")
    }
    say("ok \(i)")
}
