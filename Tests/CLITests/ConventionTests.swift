import Foundation
import Testing

/// swift-argument-parser's conventions, which users of Swift tools expect: `help <command>`, "did you mean", `-q`,
/// and the help when a command group is given nothing to do.
@Suite("conventions")
struct ConventionTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    @Test("'help COMMAND...' prints the command's help, as COMMAND... --help does")
    func helpCommand() async throws {
        for words in [[], ["migrate"], ["store", "set"], ["store"]] {
            let help = try await sandbox.run(["help"] + words)
            let flag = try await sandbox.run(words + ["--help"])
            #expect(help.status == 0 && flag.status == 0, "\(words)")
            #expect(help.out == flag.out, "\(words)")
            #expect(help.out.hasPrefix("OVERVIEW: "))
        }
    }

    @Test("'--help COMMAND...' (a help flag among the command words) prints the command's help")
    func helpFlagFirst() async throws {
        for words in [["migrate"], ["store", "set"], ["store"]] {
            let first = try await sandbox.run(["--help"] + words)
            let last = try await sandbox.run(words + ["--help"])
            #expect(first.status == 0 && first.err == "", "\(words): \(first.err)")
            #expect(first.out == last.out, "\(words)")
        }
        let short = try await sandbox.run(["store", "-h", "set"])
        #expect(short.out == (try await sandbox.run(["store", "set", "--help"])).out)
        // `help` keeps its help ahead of a `--` that follows.
        let ended = try await sandbox.run(["help", "store", "set", "--", "k"])
        #expect(ended.status == 0 && ended.out.hasPrefix("OVERVIEW: Store the value"), "\(ended.err)")
    }

    @Test("'version' prints what '--version' prints; the root help lists it, and 'versoin' gets a 'did you mean'")
    func versionCommand() async throws {
        let word = try await sandbox.run(["version"])
        let flag = try await sandbox.run(["--version"])
        #expect(word.status == 0 && word.err == "", "\(word.err)")
        #expect(word.out == flag.out)
        #expect(word.out == "apex-keychain 0.1.0\n")
        let extra = try await sandbox.run(["version", "x"])
        #expect(extra.status == 64)
        #expect(extra.err.hasPrefix("apex-keychain: '--version' takes no other arguments\n"))
        let help = try await sandbox.run(["--help"])
        #expect(help.out.contains("\n  version                 Show the version.\n"))
        let typo = try await sandbox.run(["versoin"])
        #expect(typo.err.hasPrefix("apex-keychain: unknown command 'versoin'; did you mean 'version'?"))
        // Only the tool has a version.
        let nested = try await sandbox.run(["store", "version"])
        #expect(nested.status == 64)
    }

    @Test("an invalid value close to an allowed one, or that shortens one, gets a 'did you mean'; others do not")
    func didYouMeanValue() async throws {
        let expo = try await sandbox.run(["migrate", "x", "--from", "expo"])
        #expect(expo.status == 64)
        #expect(
            expo.err == """
                apex-keychain: invalid value 'expo' for '--from <library>'; did you mean 'expo-secure-store'? \
                (values: auto, react-native-keychain, expo-secure-store, react-native-sensitive-info, \
                react-native-encrypted-storage)
                Run 'apex-keychain migrate --help' for usage.

                """)
        let suggested = [
            (["migrate", "x", "--from", "keychain"], "react-native-keychain"),
            (["migrate", "x", "--from", "react-native-keychian"], "react-native-keychain"),
            (["migrate", "x", "--format", "jsn"], "json"),
            (["migrate", "x", "--format", "MD"], nil),
            (["migrate", "x", "--format", "Markdown"], "markdown"),
            (["store", "init", "--store", "s.db", "--device", "andr"], "android"),
            (["store", "init", "--store", "s.db", "--device", "ios-no"], nil),
            (["store", "set", "--store", "s.db", "--accessible", "afterFirst", "k"], "afterFirstUnlock"),
            (["migrate", "x", "--from", "react-native"], nil),
            (["migrate", "x", "--from", "hunter2-sample-secret"], nil),
        ]
        for (arguments, suggestion) in suggested {
            let result = try await sandbox.run(arguments)
            #expect(result.status == 64, "\(arguments)")
            if let suggestion {
                #expect(result.err.contains("; did you mean '\(suggestion)'? (values: "), "\(arguments): \(result.err)")
            } else {
                #expect(
                    !result.err.contains("did you mean") && result.err.contains("; expected one of: "), "\(result.err)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: sandbox.path("s.db")))
    }

    @Test("a command group with no arguments prints its help (exit 0)")
    func groupWithoutArguments() async throws {
        for words in [[], ["store"]] {
            let bare = try await sandbox.run(words)
            let help = try await sandbox.run(words + ["--help"])
            #expect(bare.status == 0, "\(words)")
            #expect(bare.out == help.out)
            #expect(bare.err == "")
        }
    }

    @Test("a misspelt command or option gets a 'did you mean'; a far one does not")
    func didYouMean() async throws {
        let command = try await sandbox.run(["migrat", "x"])
        #expect(command.status == 64)
        #expect(
            command.err.hasPrefix(
                "apex-keychain: unknown command 'migrat'; did you mean 'migrate'? (commands: inspect, migrate, store, version)\n"
            ))
        // A word far from every command may be a secret typed in the wrong place: it is not repeated.
        let secret = try await sandbox.run(["hunter2-sample-secret"])
        #expect(secret.status == 64)
        #expect(!secret.err.contains("hunter2"))
        let sub = try await sandbox.run(["store", "lst"])
        #expect(sub.err.hasPrefix("apex-keychain: unknown command 'lst'; did you mean 'list'?"))
        let option = try await sandbox.run(["migrate", "x", "--bundle-di", "a"])
        #expect(option.err.hasPrefix("apex-keychain: unknown option '--bundle-di'; did you mean '--bundle-id'?"))
        let far = try await sandbox.run(["migrate", "x", "--frobnicate"])
        #expect(far.err.hasPrefix("apex-keychain: unknown option '--frobnicate'\n"))
    }

    @Test("-q is --quiet")
    func shortQuiet() async throws {
        let plist = sample("react-native-keychain/ios/keychain.plist")
        let short = try await sandbox.run(["migrate", plist, "--bundle-id", "com.example.sampleapp", "-q"])
        #expect(short.status == 0, "\(short.err)")
        let long = try await sandbox.run(["migrate", plist, "--bundle-id", "com.example.sampleapp", "--quiet"])
        #expect(short.out == long.out)
        let unknown = try await sandbox.run(["migrate", plist, "-z"])
        #expect(unknown.status == 64)
    }
}
