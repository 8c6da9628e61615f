import Foundation
import Testing

/// `--help` and `--version`: golden text on stdout, exit 0, nothing on stderr.
@Suite("Help and version")
struct HelpTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    @Test("--help of the tool lists its commands and exit codes")
    func rootHelp() async throws {
        let result = try await sandbox.run(["--help"])
        #expect(result.status == 0)
        #expect(result.err == "")
        #expect(
            result.out == """
                OVERVIEW: Keep secrets in an encrypted store that models a device's keychain.

                Values enter only through stdin, never through the command line, and 'store get'
                is the only command that prints one, to stdout. Results go to stdout; errors go
                to stderr as 'apex-keychain: <message>'.

                Exit codes: 0 done; 1 no such item, or the keychain refused, or some items were
                not migrated; 64 usage error; 65 not a store, or a damaged or newer one, or a
                malformed dump; 66 the store or an input file does not exist or can't be read;
                73 the store or the report can't be created; 74 I/O error; 75 temporary failure
                (locked, no terminal), try again; 77 the key file or passphrase is refused.

                USAGE: apex-keychain <subcommand>

                OPTIONS:
                  --version               Show the version.
                  -h, --help              Show help information.

                SUBCOMMANDS:
                  inspect                 List the items of keychain dumps, without values.
                  migrate                 Plan the migration of keychain dumps, or run it.
                  store                   Create a keychain store, and read and write its items.
                  version                 Show the version.

                  See 'apex-keychain <subcommand> --help' for detailed help.

                """)
    }

    @Test("--version prints the tool's name and version")
    func version() async throws {
        let result = try await sandbox.run(["--version"])
        #expect(result.status == 0)
        #expect(result.out == "apex-keychain 0.1.0\n")
        #expect(result.err == "")
    }

    @Test("store --help lists the store commands")
    func storeHelp() async throws {
        let result = try await sandbox.run(["store", "--help"])
        #expect(result.status == 0)
        #expect(result.err == "")
        #expect(
            result.out == """
                OVERVIEW: Create a keychain store, and read and write its items.

                A store is one encrypted SQLite file that models the keychain of a device
                profile. It is unlocked by a key file beside it (STORE.key, mode 0600), or by a
                passphrase that is also the device's passcode.

                USAGE: apex-keychain store <subcommand>

                OPTIONS:
                  -h, --help              Show help information.

                SUBCOMMANDS:
                  init                    Create a store.
                  list                    List the keys of a service.
                  get                     Write an item's value to stdout.
                  set                     Store the value read from stdin under a key.
                  info                    Show an item's attributes, without its value.
                  remove                  Remove an item.
                  clear                   Remove every item of a service.

                  See 'apex-keychain store <subcommand> --help' for detailed help.

                """)
    }

    @Test("store get --help shows the key argument and the shared store options")
    func getHelp() async throws {
        let result = try await sandbox.run(["store", "get", "--help"])
        #expect(result.status == 0)
        #expect(result.err == "")
        #expect(
            result.out == """
                OVERVIEW: Write an item's value to stdout.

                Writes the value exactly as it was stored, with no newline added. For
                credentials (a key 'credentials' or 'credentials:<server>' written with
                --username), writes the password. This is the only command that prints a secret.
                Prompts for the passcode when the item's access control asks for it.

                USAGE: apex-keychain store get --store <store> [--service <service>]
                         [--access-group <access-group>] [--key-file <key-file>]
                         [--passphrase-file <passphrase-file>] <key>

                ARGUMENTS:
                  <key>                   The item's key. Put '--' before a key that starts with
                                          '-'.

                OPTIONS:
                  --store <store>         The store file.
                  --service <service>     The service whose items the command reads or writes.
                                          (default: the store's default service: the --bundle-id
                                          given to 'store init', else 'apex-keychain' for linux,
                                          'com.example.app' for the phone profiles)
                  --access-group <access-group>
                                          The access group of the items (the iOS and linux
                                          profiles; a migration keeps the group each item had).
                                          (default: the store's default group: the team id and
                                          bundle id on the iOS profiles, 'local' on linux)
                  --key-file <key-file>   The key file that unlocks the store. (default: the
                                          store's path followed by '.key')
                  --passphrase-file <passphrase-file>
                                          A file holding the store's passphrase, readable by its
                                          owner only (at most 1 KiB; one trailing newline is not
                                          part of it). It also answers the device's passcode
                                          prompts. Without it, a passphrase store asks on the
                                          terminal.
                  -h, --help              Show help information.

                """)
    }

    @Test("store set --help tells to use printf, since stdin is stored byte for byte")
    func setHelpExplainsStdin() async throws {
        let result = try await sandbox.run(["store", "set", "--help"])
        #expect(result.status == 0)
        #expect(
            result.out.contains(
                """
                The value is all of stdin, byte for byte: nothing is trimmed, so a trailing
                newline is part of the value. Use printf '%s' rather than echo, which adds one:

                  printf '%s' "$TOKEN" | apex-keychain store set --store app.db api-token

                """))
        #expect(
            result.out.contains(
                """
                  --accessible <accessible>
                                          When the item can be read. (values: afterFirstUnlock,
                                          afterFirstUnlockThisDeviceOnly, whenUnlocked,
                                          whenUnlockedThisDeviceOnly,
                                          whenPasscodeSetThisDeviceOnly; default:
                                          afterFirstUnlock)

                """))
    }

    @Test(
        "every store command has a help with the same sections, under 80 columns",
        arguments: ["init", "list", "get", "set", "info", "remove", "clear"])
    func everyCommandHasHelp(_ command: String) async throws {
        let result = try await sandbox.run(["store", command, "--help"])
        #expect(result.status == 0)
        #expect(result.err == "")
        let lines = result.out.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first?.hasPrefix("OVERVIEW: ") == true)
        #expect(lines.contains { $0.hasPrefix("USAGE: apex-keychain store \(command) --store <store>") })
        #expect(lines.contains("OPTIONS:"))
        #expect(lines.contains("  --store <store>         The store file."))
        #expect(lines.contains("  -h, --help              Show help information."))
        #expect(lines.allSatisfy { $0.count <= 80 })
        let short = try await sandbox.run(["store", command, "-h"])
        #expect(short.out == result.out)
    }

    @Test("--help wins over missing or unknown arguments")
    func helpWinsOverErrors() async throws {
        let result = try await sandbox.run(["store", "set", "--frob", "--help"])
        #expect(result.status == 0)
        #expect(result.out.hasPrefix("OVERVIEW: Store the value read from stdin under a key.\n"))
        #expect(result.err == "")
    }
}
