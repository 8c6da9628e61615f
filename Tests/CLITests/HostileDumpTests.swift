import Foundation
import Testing

/// Dumps made to hurt the tool rather than to be migrated: each attack of the security review that a dump can
/// carry, run through the built binary.
@Suite("hostile dumps")
struct HostileDumpTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    /// A binary plist of react-native-keychain generic passwords, all in one service: every one maps to
    /// `<service>/credentials`.
    func oneServiceDump(items: Int) throws -> String {
        let genp: [[String: Any]] = (0..<items).map { index in
            [
                "acct": "user\(index)@example.com", "agrp": "A1B2C3D4E5.com.example.app", "pdmn": "ck",
                "svce": "vault", "sync": 0, "v_Data": Data("pw-\(index)".utf8),
            ]
        }
        let data = try PropertyListSerialization.data(fromPropertyList: ["genp": genp], format: .binary, options: 0)
        return try sandbox.write("one-service.plist", data)
    }

    /// Review, "Quadratic reports": N items that map to one target key each got a conflict reason listing the
    /// other N-1 items (5,000 items printed 671 MB; 20,000 reached the OOM killer). A reason now names at most
    /// three others and counts a larger group, so the report is linear in the items.
    @Test("20,000 items mapping to one key: every conflict reason is short, and the report stays under 10 MB")
    func conflictReportsAreLinear() async throws {
        let dump = try oneServiceDump(items: 20_000)
        let text = try await sandbox.run(["migrate", dump, "--dry-run", "--bundle-id", "com.example.app"])
        #expect(text.status == 0)
        #expect(text.stdout.count < 10_000_000, "\(text.stdout.count) bytes")
        #expect(text.out.contains("summary: found 20000, create 0, exists 0, conflict 20000"))
        let longest = text.out.split(separator: "\n").map(\.utf8.count).max() ?? 0
        #expect(longest < 400, "longest line: \(longest) bytes")

        let json = try await sandbox.run(
            ["migrate", dump, "--dry-run", "--bundle-id", "com.example.app", "--format", "json"])
        let report = try jsonObject(json)
        let items = try #require(report["items"] as? [[String: Any]])
        #expect(items.count == 20_000)
        let reasons = items.compactMap { $0["reason"] as? String }
        #expect(reasons.count == 20_000)
        #expect(reasons.allSatisfy { $0.contains("one of 20000 source items") && $0.utf8.count < 200 })
    }

    @Test("a small group still names the other items of the conflict")
    func smallGroupsNameTheOthers() async throws {
        let dump = try oneServiceDump(items: 3)
        let json = try await sandbox.run(
            ["migrate", dump, "--dry-run", "--bundle-id", "com.example.app", "--format", "json"])
        let items = try #require(try jsonObject(json)["items"] as? [[String: Any]])
        let reasons = items.compactMap { $0["reason"] as? String }
        #expect(reasons.count == 3)
        #expect(
            reasons.first?.contains(
                "2 other source items map to the same target key: \(dump) genp item 2, \(dump) genp item 3; keep one: "
            ) == true, "\(reasons.first ?? "")")
    }
}

/// Review, "Terminal injection": control characters in services, accounts, access groups and file names reached
/// the terminal raw (a dump could set the terminal's title, clear the screen, or print a fake row over a real
/// one), and Markdown rendered a dump's HTML, links and @mentions. Every human-readable output now shows them as
/// `\u{…}` escapes, Markdown cells are code spans, and JSON stays exact.
@Suite("hostile names")
struct HostileNameTests {
    let sandbox: Sandbox

    init() throws { sandbox = try Sandbox() }

    /// Names a dump can carry that a terminal or a Markdown renderer would obey.
    static let attacks = [
        "title\u{1B}]0;pwned\u{7}", "clear\u{1B}[2J\u{1B}[H", "fake\rINJECTED-ROW create (verified)",
        "back\u{8}\u{8}\u{8}space", "line\nbreak", "c1\u{9B}31m", "bidi\u{202E}txt.exe", "isolate\u{2066}x\u{2069}",
        "<img src=x onerror=alert(1)>", "[click](https://evil.example)", "@everyone", "tick`s", "del\u{7F}",
    ]

    /// Whether the text holds a scalar a terminal or a reader must not get raw (a line feed is the output's own).
    static func unsafe(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            scalar != "\n"
                && (scalar.properties.generalCategory == .control
                    || [0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069]
                        .contains(scalar.value))
        }
    }

    /// A binary plist of react-native-keychain items whose services, accounts and access groups are the attacks.
    func hostileDump() throws -> String {
        let genp: [[String: Any]] = Self.attacks.enumerated().map { index, name in
            [
                "acct": name, "agrp": "A1B2C3D4E5.\(name)", "pdmn": "ck", "svce": name,
                "v_Data": Data("pw-\(index)".utf8),
            ]
        }
        let data = try PropertyListSerialization.data(fromPropertyList: ["genp": genp], format: .binary, options: 0)
        return try sandbox.write("hostile\u{1B}[31m.plist", data)
    }

    @Test("inspect and migrate (text and Markdown) show no control or bidi character; JSON keeps the names exact")
    func reportsAreSafe() async throws {
        let dump = try hostileDump()
        let runs: [[String]] = [
            ["inspect", dump, "--include-labels"],
            ["migrate", dump, "--dry-run", "--bundle-id", "com.example.app", "--include-labels"],
            ["migrate", dump, "--dry-run", "--bundle-id", "com.example.app", "--format", "markdown"],
        ]
        for arguments in runs {
            let result = try await sandbox.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.err)")
            #expect(!Self.unsafe(result.out), "\(arguments)")
            #expect(!Self.unsafe(result.err), "\(arguments)")
            #expect(result.out.contains("title\\u{1B}]0;pwned\\u{7}"), "\(arguments)")
            #expect(result.out.contains("hostile\\u{1B}[31m.plist"), "\(arguments)")
            #expect(!result.out.split(separator: "\n").contains { $0.hasPrefix("INJECTED-ROW") })
        }
        let markdown = try await sandbox.run(runs[2])
        // No cell text outside a code span: HTML, links and mentions are not rendered.
        #expect(markdown.out.contains("| `react-native-keychain ios <img src=x onerror=alert(1)>` |"))
        #expect(markdown.out.contains("`` tick`s ``") || markdown.out.contains("``tick`s"))
        #expect(
            !markdown.out.contains("| <img") && !markdown.out.contains("| [click]")
                && !markdown.out.contains("| @everyone"))

        let json = try await sandbox.run(["inspect", dump, "--format", "json", "--include-labels"])
        let items = try #require(try jsonObject(json)["items"] as? [[String: Any]])
        let services = Set(items.compactMap { ($0["source"] as? [String: Any])?["service"] as? String })
        #expect(services == Set(Self.attacks))
    }

    @Test("stderr messages and store listings show a hostile name escaped")
    func messagesAndListingsAreSafe() async throws {
        let broken = try sandbox.write(
            "broken\u{1B}]0;pwned\u{7}.plist", "<?xml version=\"1.0\"?><plist><dict><key>genp")
        let failed = try await sandbox.run(["inspect", broken])
        #expect(failed.status == 65)
        #expect(!Self.unsafe(failed.err))
        #expect(failed.err.contains("broken\\u{1B}]0;pwned\\u{7}.plist"))

        let store = try await sandbox.initStore()
        for key in ["title\u{1B}]0;pwned\u{7}", "bidi\u{202E}txt"] {
            try await sandbox.set(store, key, "v")
        }
        for arguments in [["store", "list", "--store", store], ["store", "list", "--store", store, "--all-services"]] {
            let list = try await sandbox.run(arguments)
            #expect(list.status == 0)
            #expect(!Self.unsafe(list.out.replacingOccurrences(of: "\t", with: " ")), "\(arguments)")
            #expect(list.out.contains("title\\u{1B}]0;pwned\\u{7}"))
            #expect(list.out.contains("bidi\\u{202E}txt"))
        }
        let missing = try await sandbox.run(["store", "get", "--store", store, "gone\u{1B}[2J"])
        #expect(missing.status == 1)
        #expect(!Self.unsafe(missing.err))
    }
}
