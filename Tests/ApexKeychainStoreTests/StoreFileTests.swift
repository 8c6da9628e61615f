import ApexKeychain
import ApexKeychainStore
import ApexTestSupport
import Foundation
import Synchronization
import Testing

/// Creating and opening the store file: what is refused, and with which error.
@Suite("Store file")
struct StoreFileTests {
    let scratch: ScratchFolder
    let store: TestStore

    init() throws {
        scratch = try ScratchFolder("store-test")
        store = TestStore(scratch)
    }

    var directory: URL { scratch.url }
    var storeURL: URL { store.url }

    @Test("a created store reopens with its key file and keeps items and the device profile")
    func reopens() async throws {
        let keyFile = SQLiteKeychainDatabase.defaultKeyFile(for: storeURL)
        do {
            let db = try SQLiteKeychainDatabase.create(at: storeURL, key: .keyFile(keyFile), device: .ios)
            let keychain = try Keychain(KeychainOptions(service: "s"), database: db, device: db.makeDevice())
            try await keychain.setItem("k", "v", SetOptions(label: ""))
        }
        let db = try SQLiteKeychainDatabase(opening: storeURL, key: .keyFile(keyFile))
        #expect(db.deviceProfile == .ios)
        let keychain = try Keychain(KeychainOptions(service: "s"), database: db, device: db.makeDevice())
        #expect(try await keychain.getItem("k") == "v")
        #expect(try await keychain.getItemInfo("k")?.label == "")
    }

    // MARK: Files that are not stores

    @Test("a file of random bytes is not a store; the error names the file, and the file is left as it was")
    func randomBytes() throws {
        var generator = SystemRandomNumberGenerator()
        let bytes = Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try bytes.write(to: storeURL)
        let error = storeError { () throws(StoreError) in try store.open() }
        #expect(error?.kind == .notAStore)
        #expect(error?.path == storeURL.path)
        #expect(error?.description.contains(storeURL.path) == true)
        #expect(try Data(contentsOf: storeURL) == bytes)
        #expect(try scratch.names() == ["store.db"])
    }

    @Test("a text file is not a store")
    func textFile() throws {
        try Data("name,password\nalice,hunter2\n".utf8).write(to: storeURL)
        let error = storeError { () throws(StoreError) in try store.open() }
        #expect(error?.kind == .notAStore)
        #expect(error?.path == storeURL.path)
    }

    /// SQLite databases that are not stores, as other programs leave them.
    enum ForeignDatabase: String, CaseIterable, Sendable {
        /// An empty file: a valid SQLite database with no tables.
        case emptyFile
        /// Another program's tables.
        case otherTables
        /// A table called `meta` of the same shape, without the store's format mark, at the store's version.
        case metaWithoutFormat
        /// Another program's tables, with its own `user_version` (as many programs set).
        case otherTablesWithUserVersion

        func write(to url: URL) throws {
            if self == .emptyFile {
                try Data().write(to: url)
                return
            }
            let db = try RawDatabase(url, create: true)
            switch self {
            case .emptyFile: break
            case .otherTables:
                try db.execute(
                    "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes(body) VALUES ('hello');")
            case .metaWithoutFormat:
                try db.execute(
                    """
                    CREATE TABLE meta(name TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
                    INSERT INTO meta VALUES ('format', CAST('someone-elses-format' AS BLOB));
                    CREATE TABLE items(id INTEGER PRIMARY KEY, data BLOB);
                    PRAGMA user_version = 1;
                    """)
            case .otherTablesWithUserVersion:
                try db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); PRAGMA user_version = 7;")
            }
        }
    }

    @Test(
        "an SQLite database of another schema is not a store, and is left as it was",
        arguments: ForeignDatabase.allCases)
    func foreignDatabase(_ kind: ForeignDatabase) throws {
        try kind.write(to: storeURL)
        let before = try Data(contentsOf: storeURL)
        let error = storeError { () throws(StoreError) in try store.open() }
        #expect(error?.kind == .notAStore, "\(error?.description ?? "no error")")
        #expect(error?.path == storeURL.path)
        #expect(try Data(contentsOf: storeURL) == before)
    }

    @Test("a store of a newer schema version is refused, naming both versions, and is left as it was")
    func newerVersion() throws {
        _ = try store.create()
        try store.raw().execute("PRAGMA user_version = 99")
        let error = storeError { () throws(StoreError) in try store.open() }
        #expect(error?.kind == .newerVersion)
        #expect(error?.path == storeURL.path)
        let versions = numbers(in: error?.message ?? "")
        #expect(versions.contains(99), "\(error?.message ?? "")")
        #expect(versions.contains(2), "\(error?.message ?? "")")
        #expect(try store.raw().integer("PRAGMA user_version") == 99)
    }

    @Test("opening a missing store fails with notFound and creates nothing")
    func missingStore() throws {
        let error = storeError { () throws(StoreError) in try store.open() }
        #expect(error?.kind == .notFound)
        #expect(error?.path == storeURL.path)
        #expect(try scratch.names().isEmpty)
    }

    // MARK: Creating

    @Test("create over an existing file fails with cannotCreate and leaves the file as it was")
    func createOverExistingFile() throws {
        let original = Data("precious data that is not a store\n".utf8)
        try original.write(to: storeURL)
        let error = storeError { () throws(StoreError) in try store.create() }
        #expect(error?.kind == .cannotCreate)
        #expect(error?.path == storeURL.path)
        #expect(try Data(contentsOf: storeURL) == original)
        #expect(try scratch.names() == ["store.db"], "no key file or temporary file is left behind")
    }

    @Test("create over an existing store fails with cannotCreate; the store and its key file still work")
    func createOverExistingStore() async throws {
        do {
            let db = try store.create()
            try await keychain(db).setItem("k", "first")
        }
        let keyBefore = try Data(contentsOf: store.keyFile)
        let error = storeError { () throws(StoreError) in try store.create() }
        #expect(error?.kind == .cannotCreate)
        #expect(try Data(contentsOf: store.keyFile) == keyBefore)
        #expect(try await keychain(store.open()).getItem("k") == "first")
    }

    @Test("create refuses to overwrite an existing key file, and leaves no store behind")
    func createOverExistingKeyFile() throws {
        let original = Data("someone's key file\n".utf8)
        try original.write(to: store.keyFile)
        let error = storeError { () throws(StoreError) in try store.create() }
        #expect(error?.kind == .cannotCreate)
        #expect(try Data(contentsOf: store.keyFile) == original)
        #expect(try scratch.names() == ["store.db.key"])
    }

    @Test("a failed create leaves nothing behind")
    func failedCreateLeavesNothing() throws {
        let keyFile = directory.appendingPathComponent("missing-folder/store.key")
        let error = storeError { () throws(StoreError) in
            try SQLiteKeychainDatabase.create(at: storeURL, key: .keyFile(keyFile), device: .linux)
        }
        #expect(error?.kind == .cannotCreate)
        #expect(try scratch.names().isEmpty)
    }

    @Test("a create that fails after writing the key file removes the key file again")
    func failedCreateRemovesKeyFile() throws {
        let url = directory.appendingPathComponent("missing-folder/store.db")
        let keyFile = directory.appendingPathComponent("store.key")
        let error = storeError { () throws(StoreError) in
            try SQLiteKeychainDatabase.create(at: url, key: .keyFile(keyFile), device: .linux)
        }
        #expect(error?.kind == .cannotCreate)
        #expect(try scratch.names().isEmpty)
    }

    @Test(
        "two creates of one store at the same time: one succeeds, the other fails with cannotCreate",
        arguments: ["passphrase", "keyFile"])
    func concurrentCreates(_ key: String) async throws {
        let results = Mutex<[Int: Result<Bool, StoreError>]>([:])
        // Two real threads, released together, so that both creates run at once whatever else the machine does.
        let ready = DispatchSemaphore(value: 0)
        let go = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for index in 0..<2 {
            let source: StoreKeySource =
                key == "passphrase"
                ? .passphrase(Data("passphrase \(index)".utf8))
                : .keyFile(directory.appendingPathComponent("key-\(index)"))
            let url = storeURL
            done.enter()
            Thread {
                ready.signal()
                go.wait()
                let result = Result { () throws(StoreError) -> Bool in
                    try SQLiteKeychainDatabase.create(at: url, key: source, device: .linux).usesPassphrase
                }
                results.withLock { $0[index] = result }
                done.leave()
            }.start()
        }
        ready.wait()
        ready.wait()
        go.signal()
        go.signal()
        await withCheckedContinuation { continuation in done.notify(queue: .global()) { continuation.resume() } }
        let all = results.withLock { $0 }
        let winners = all.filter { if case .success = $0.value { true } else { false } }.map(\.key)
        #expect(
            winners.count == 1, "\(winners.count) creates succeeded: \(all.sorted { $0.key < $1.key }.map(\.value))")
        for (_, result) in all {
            if case .failure(let error) = result { #expect(error.kind == .cannotCreate) }
        }
        // The store in place opens with the winner's key.
        if let winner = winners.first {
            let source: StoreKeySource =
                key == "passphrase"
                ? .passphrase(Data("passphrase \(winner)".utf8))
                : .keyFile(directory.appendingPathComponent("key-\(winner)"))
            #expect(throws: Never.self) { _ = try SQLiteKeychainDatabase(opening: storeURL, key: source) }
        }
    }

    @Test("create with an empty passphrase fails and leaves nothing behind")
    func emptyPassphrase() throws {
        let error = storeError { () throws(StoreError) in
            try SQLiteKeychainDatabase.create(at: storeURL, key: .passphrase(Data()), device: .linux)
        }
        #expect(error != nil)
        #expect(try scratch.names().isEmpty)
    }

    @Test("create leaves only the store, its key file and SQLite's -wal/-shm files in the folder")
    func noTemporaryFiles() throws {
        let allowed: Set = ["store.db", "store.db.key", "store.db-wal", "store.db-shm"]
        do {
            let db = try store.create()
            let names = Set(try scratch.names())
            #expect(names.isSubset(of: allowed), "unexpected files: \(names.subtracting(allowed).sorted())")
            #expect(names.isSuperset(of: ["store.db", "store.db.key"]))
            _ = db
        }
        #expect(Set(try scratch.names()).isSubset(of: allowed))
        #expect(Set(try scratch.names()).isSuperset(of: ["store.db", "store.db.key"]))
    }

    @Test("create with a passphrase leaves only the store and SQLite's -wal/-shm files, and no key file")
    func noTemporaryFilesWithPassphrase() throws {
        let allowed: Set = ["store.db", "store.db-wal", "store.db-shm"]
        do {
            let db = try SQLiteKeychainDatabase.create(
                at: storeURL, key: .passphrase(Data("pass".utf8)), device: .linux)
            let names = Set(try scratch.names())
            #expect(names.isSubset(of: allowed), "unexpected files: \(names.subtracting(allowed).sorted())")
            #expect(names.contains("store.db"))
            _ = db
        }
        #expect(Set(try scratch.names()).isSubset(of: allowed))
    }

    @Test("the store file is SQLite in WAL mode at user_version 2, marked as a store")
    func fileFormat() throws {
        do { _ = try store.create() }
        let raw = try store.raw()
        #expect(try raw.text("PRAGMA journal_mode") == "wal")
        #expect(try raw.integer("PRAGMA user_version") == 2)
        #expect(try raw.text("SELECT CAST(value AS TEXT) FROM meta WHERE name = 'format'") == "apex-keychain-store")
        #expect(try raw.text("SELECT CAST(value AS TEXT) FROM meta WHERE name = 'device'") == "ios")
        #expect(try raw.text("PRAGMA integrity_check") == "ok")
    }

    @Test("the WAL file stays bounded while one store stays open and keeps writing")
    func walStaysBounded() async throws {
        let db = try store.create()
        let kc = try keychain(db)
        let value = Data(repeating: 0x5A, count: 48 * 1024)
        // About 13 pages a write: 200 writes put some 2,600 pages through the WAL, well past SQLite's automatic
        // checkpoint at 1,000 pages, after which the WAL is written again from its start.
        for index in 0..<200 {
            try await kc.setBytes("k\(index % 10)", value + Data("\(index)".utf8))
        }
        let wal = try FileManager.default.attributesOfItem(atPath: storeURL.path + "-wal")
        let size = (wal[.size] as? NSNumber)?.intValue ?? 0
        #expect(size < 6 * 1024 * 1024, "the WAL has grown to \(size) bytes")
    }

    @Test("the store and SQLite's -wal and -shm files are readable by their owner only")
    func storeFilesOwnerOnly() async throws {
        let db = try store.create()
        try await keychain(db).setItem("k", "v")
        let names = try scratch.names()
        #expect(names.contains("store.db-wal"))
        for name in names {
            let attributes = try FileManager.default.attributesOfItem(atPath: scratch.file(name).path)
            let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0o777
            #expect(mode & 0o077 == 0, "\(name) has mode \(String(mode, radix: 8))")
        }
    }

    @Test("the key file is created 0600 with the v1 header and a base64 key of 32 bytes")
    func keyFileFormat() throws {
        do { _ = try store.create() }
        let attributes = try FileManager.default.attributesOfItem(atPath: store.keyFile.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let text = try String(contentsOf: store.keyFile, encoding: .utf8)
        let header = "apex-keychain key v1\n"
        #expect(text.hasPrefix(header))
        #expect(text.hasSuffix("\n"))
        let body = text.dropFirst(header.count).dropLast()
        #expect(Data(base64Encoded: String(body))?.count == 32)
    }

    // MARK: Key files

    @Test(
        "a key file others can access is refused with keyFile and a 'chmod 600' hint",
        arguments: [0o644, 0o640, 0o604, 0o666, 0o660])
    func keyFileReadableByOthers(_ mode: Int) throws {
        do { _ = try store.create() }
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: store.keyFile.path)
        let error = storeError { () throws(StoreError) in try store.open() }
        #expect(error?.kind == .keyFile)
        #expect(error?.message.contains("chmod 600") == true, "\(error?.message ?? "")")
        #expect(error?.description.contains(store.keyFile.path) == true)
    }

    @Test("a key file only its owner can read (0400) opens the store")
    func keyFileReadOnlyForOwner() throws {
        do { _ = try store.create() }
        try FileManager.default.setAttributes([.posixPermissions: 0o400], ofItemAtPath: store.keyFile.path)
        #expect(try store.open().deviceProfile == .ios)
    }

    static let malformedKeyFiles: [String] = [
        "",
        "garbage",
        "apex-keychain key v1\n",
        "apex-keychain key v1\nnot base64 at all!\n",
        "apex-keychain key v1\n\(Data(repeating: 7, count: 31).base64EncodedString())\n",
        "apex-keychain key v1\n\(Data(repeating: 7, count: 33).base64EncodedString())\n",
        "apex-keychain key v2\n\(Data(repeating: 7, count: 32).base64EncodedString())\n",
        "\(Data(repeating: 7, count: 32).base64EncodedString())\n",
    ]

    @Test("a malformed key file is refused with keyFile", arguments: malformedKeyFiles)
    func malformedKeyFile(_ contents: String) throws {
        do { _ = try store.create() }
        try FileManager.default.removeItem(at: store.keyFile)
        try Data(contents.utf8).write(to: store.keyFile)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: store.keyFile.path)
        let error = storeError { () throws(StoreError) in try store.open() }
        #expect(error?.kind == .keyFile)
        #expect(error?.path == store.keyFile.path)
    }

    @Test("a missing key file is refused with keyFileMissing, naming the key file")
    func missingKeyFile() throws {
        do { _ = try store.create() }
        try FileManager.default.removeItem(at: store.keyFile)
        let error = storeError { () throws(StoreError) in try store.open() }
        #expect(error?.kind == .keyFileMissing)
        #expect(error?.path == store.keyFile.path)
    }

    @Test("another store's key file is refused with wrongKey, naming the key file")
    func anotherStoresKeyFile() throws {
        let other = TestStore(scratch, name: "other.db")
        do {
            _ = try store.create()
            _ = try other.create()
        }
        let before = try Data(contentsOf: store.url)
        let error = storeError { () throws(StoreError) in
            try SQLiteKeychainDatabase(opening: store.url, key: .keyFile(other.keyFile))
        }
        #expect(error?.kind == .wrongKey)
        #expect(error?.path == store.url.path)
        #expect(error?.message.contains(other.keyFile.path) == true, "\(error?.message ?? "")")
        #expect(try Data(contentsOf: store.url) == before, "a refused open changed the store")
        #expect(try store.open().deviceProfile == .ios, "the store still opens with its own key file")
    }

    // MARK: Passphrases

    @Test("a passphrase store opens with its passphrase, and with nothing else")
    func passphraseStore() async throws {
        let passphrase = Data("correct horse battery staple".utf8)
        do {
            let db = try SQLiteKeychainDatabase.create(at: storeURL, key: .passphrase(passphrase), device: .ios)
            #expect(db.usesPassphrase)
            try await keychain(db).setItem("k", "kept")
        }
        do {
            let db = try SQLiteKeychainDatabase(opening: storeURL, key: .passphrase(passphrase))
            #expect(db.usesPassphrase)
            #expect(db.deviceProfile == .ios)
            #expect(try await keychain(db).getItem("k") == "kept")
        }

        let wrong = storeError { () throws(StoreError) in
            try SQLiteKeychainDatabase(opening: storeURL, key: .passphrase(Data("correct horse battery stapler".utf8)))
        }
        #expect(wrong?.kind == .wrongKey)
        #expect(wrong?.path == storeURL.path)

        let empty = storeError { () throws(StoreError) in
            try SQLiteKeychainDatabase(opening: storeURL, key: .passphrase(Data()))
        }
        #expect(empty?.kind == .wrongKey)

        let other = TestStore(scratch, name: "other.db")
        do { _ = try other.create() }
        let withKeyFile = storeError { () throws(StoreError) in
            try SQLiteKeychainDatabase(opening: storeURL, key: .keyFile(other.keyFile))
        }
        #expect(withKeyFile?.kind == .wrongKey)
    }

    @Test("a key-file store is refused with wrongKey when opened with a passphrase")
    func keyFileStoreWithPassphrase() throws {
        do { _ = try store.create() }
        let error = storeError { () throws(StoreError) in
            try SQLiteKeychainDatabase(opening: storeURL, key: .passphrase(Data("anything".utf8)))
        }
        #expect(error?.kind == .wrongKey)
    }

    @Test("verifyPassphrase accepts the store's passphrase only")
    func verifyPassphrase() throws {
        let passphrase = Data("open sesame".utf8)
        let db = try SQLiteKeychainDatabase.create(at: storeURL, key: .passphrase(passphrase), device: .linux)
        #expect(db.verifyPassphrase(passphrase))
        #expect(!db.verifyPassphrase(Data("open sesamE".utf8)))
        #expect(!db.verifyPassphrase(Data()))

        let keyFileDB = try TestStore(scratch, name: "other.db").create(device: .linux)
        #expect(!keyFileDB.verifyPassphrase(passphrase))
    }

    // MARK: Devices

    @Test(
        "makeDevice models the profile recorded in the store", arguments: DeviceProfile.allCases.filter { $0 != .linux }
    )
    func simulatedDevices(_ profile: DeviceProfile) throws {
        do { _ = try store.create(device: profile) }
        let db = try store.open()
        #expect(db.deviceProfile == profile)
        let device = db.makeDevice()
        #expect(device is SimulatedDevice)
        let state = device.state()
        switch profile {
        case .ios:
            #expect(state.platform == .iOS(major: 18))
            #expect(state.biometry == .faceID)
            #expect(state.biometryEnrolled)
            #expect(state.passcodeSet)
        case .iosNoBiometrics:
            #expect(state.platform == .iOS(major: 18))
            #expect(state.biometry == nil)
            #expect(state.passcodeSet)
        case .iosNoPasscode:
            #expect(state.platform == .iOS(major: 18))
            #expect(!state.passcodeSet)
            #expect(!state.biometryEnrolled)
        case .android:
            #expect(state.platform == .android(apiLevel: 34))
            #expect(state.biometry == .fingerprint)
            #expect(state.hasStrongBox)
            #expect(state.passcodeSet)
        case .android10:
            #expect(state.platform == .android(apiLevel: 29))
            #expect(state.biometry == .fingerprint)
            #expect(!state.hasStrongBox)
            #expect(state.passcodeSet)
        case .linux:
            Issue.record("linux is tested separately")
        }
    }

    @Test("the linux profile is this machine: a TerminalDevice whose passcode exists only with a passphrase")
    func linuxDevice() throws {
        let keyFileDB = try store.create(device: .linux)
        let keyFileDevice = keyFileDB.makeDevice(passcode: .none)
        #expect(keyFileDevice is TerminalDevice)
        #expect(keyFileDevice.state().platform == .linux)
        #expect(keyFileDevice.state().passcodeSet == keyFileDB.usesPassphrase)
        #expect(!keyFileDevice.state().passcodeSet)
        #expect(keyFileDevice.state().biometry == nil)

        let passphraseDB = try SQLiteKeychainDatabase.create(
            at: directory.appendingPathComponent("pass.db"), key: .passphrase(Data("pw".utf8)), device: .linux)
        let passphraseDevice = passphraseDB.makeDevice(passcode: .none)
        #expect(passphraseDevice is TerminalDevice)
        #expect(passphraseDevice.state().passcodeSet == passphraseDB.usesPassphrase)
        #expect(passphraseDevice.state().passcodeSet)
    }

    @Test("on the linux profile a passcode item opens with the given passphrase only, and never prompts without one")
    func linuxPasscodeItems() async throws {
        let passphrase = Data("pw-linux".utf8)
        let db = try SQLiteKeychainDatabase.create(at: storeURL, key: .passphrase(passphrase), device: .linux)
        let options = KeychainOptions(service: "s")
        let writer = try Keychain(options, database: db, device: db.makeDevice(passcode: .none))
        try await writer.setItem("k", "guarded", SetOptions(accessControl: .passcode))

        let right = try Keychain(options, database: db, device: db.makeDevice(passcode: .given(passphrase)))
        #expect(try await right.getItem("k") == "guarded")

        let wrong = try Keychain(options, database: db, device: db.makeDevice(passcode: .given(Data("nope".utf8))))
        let failed = await #expect(throws: KeychainError.self) { _ = try await wrong.getItem("k") }
        #expect(failed?.code == .AUTHENTICATION_FAILED)

        let none = try Keychain(options, database: db, device: db.makeDevice(passcode: .none))
        let refused = await #expect(throws: KeychainError.self) { _ = try await none.getItem("k") }
        #expect(refused?.code == .INTERACTION_NOT_ALLOWED)

        let keyFileDB = try TestStore(scratch, name: "other.db").create(device: .linux)
        let noPasscode = try Keychain(options, database: keyFileDB, device: keyFileDB.makeDevice(passcode: .none))
        let unset = await #expect(throws: KeychainError.self) {
            try await noPasscode.setItem("k", "v", SetOptions(accessControl: .passcode))
        }
        #expect(unset?.code == .PASSCODE_NOT_SET)
    }
}
