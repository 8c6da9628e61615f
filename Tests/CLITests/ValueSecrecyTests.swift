import Foundation
import Testing

/// A value reaches stdout through `store get` and nowhere else: never stderr, never another command's output,
/// never the store file in the clear.
@Suite("value secrecy")
struct ValueSecrecyTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    func expectNoCanary(
        _ result: CLIResult, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(!result.err.contains(canary), comment, sourceLocation: sourceLocation)
        #expect(!result.out.contains(canary), comment, sourceLocation: sourceLocation)
    }

    @Test("failed writes never repeat the value read from stdin")
    func failedWrites() async throws {
        let store = try await sandbox.initStore(device: "ios-no-biometrics")
        let value = Data(canary.utf8)
        let attempts: [[String]] = [
            ["--access-control", "biometryAny", "k"],
            ["--synchronizable", "--accessible", "whenPasscodeSetThisDeviceOnly", "k"],
            ["--key-storage", "tee", "k"],
            ["--username", "alice", "not-credentials"],
            ["--service", "", "k"],
            ["--accessible", "never", "k"],
        ]
        for options in attempts {
            let result = try await sandbox.run(["store", "set", "--store", store] + options, stdin: value)
            #expect(result.status != 0, "\(options)")
            #expect(!result.err.isEmpty, "\(options)")
            expectNoCanary(result, "\(options)")
        }
        let list = try await sandbox.run(["store", "list", "--store", store])
        #expect(list.out == "")
    }

    @Test("a value typed on the command line by mistake is refused and not repeated")
    func valueInArguments() async throws {
        let store = try await sandbox.initStore()
        let result = try await sandbox.run(["store", "set", "--store", store, "k", canary])
        #expect(result.status == 64)
        #expect(
            result.err == """
                apex-keychain: too many arguments: 'set' takes only <key> (the value is read from stdin, never from \
                the command line)
                Run 'apex-keychain store set --help' for usage.

                """)
        let option = try await sandbox.run(["store", "set", "--store", store, "--value=\(canary)", "k"])
        #expect(option.status == 64)
        expectNoCanary(option)
    }

    @Test("only get prints the value: list, info, remove, clear and errors don't, and the file holds it sealed")
    func onlyGetPrintsIt() async throws {
        let store = try await sandbox.initStore()
        try await sandbox.set(store, "k", canary, ["--label", "label"])
        try await sandbox.set(store, "credentials", canary, ["--username", "user"])
        for arguments in [
            ["list"], ["list", "--all-services"], ["info", "k"], ["info", "k", "--format", "json"],
            ["info", "credentials"], ["get", "missing"], ["set", "--access-control", "passcode", "k"],
        ] {
            let result = try await sandbox.run(
                ["store"] + arguments.prefix(1) + ["--store", store] + arguments.dropFirst())
            expectNoCanary(result, "\(arguments)")
        }
        let get = try await sandbox.run(["store", "get", "--store", store, "k"])
        #expect(get.out == canary)
        #expect(!get.err.contains(canary))
        for suffix in ["", "-wal"] {
            if let file = FileManager.default.contents(atPath: store + suffix) {
                #expect(file.range(of: Data(canary.utf8)) == nil, "the value is in \(store + suffix) in the clear")
            }
        }
        for arguments in [["remove", "k"], ["clear", "--yes"]] {
            let result = try await sandbox.run(
                ["store"] + arguments.prefix(1) + ["--store", store] + arguments.dropFirst())
            #expect(result.status == 0)
            expectNoCanary(result, "\(arguments)")
        }
    }
}
