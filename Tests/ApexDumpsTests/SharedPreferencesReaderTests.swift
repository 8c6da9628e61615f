import ApexDumps
import ApexTestSupport
import Foundation
import Testing

private let realWorld = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("Fixtures/real-world")

private func realFixture(_ name: String) throws -> (data: Data, path: String) {
    let url = realWorld.appendingPathComponent(name)
    return (try Data(contentsOf: url), url.path)
}

private func readXML(
    _ text: String, path: String = "/dumps/shared_prefs/test.xml"
) throws(DumpError) -> [PreferenceEntry] {
    try SharedPreferencesReader.read(Data(text.utf8), path: path)
}

private func xml(_ body: String) -> String {
    "<?xml version='1.0' encoding='utf-8' standalone='yes' ?>\n<map>\n\(body)\n</map>\n"
}

/// The raw text between `<string name="NAME">` and `</string>` in a file without escapes.
private func rawElementText(_ file: String, name: String) -> String? {
    guard let start = file.range(of: "<string name=\"\(name)\">"),
        let end = file.range(of: "</string>", range: start.upperBound..<file.endIndex)
    else { return nil }
    return String(file[start.upperBound..<end.lowerBound])
}

@Suite("SharedPreferences reader")
struct SharedPreferencesReaderTests {
    // MARK: Real files

    @Test("RN_KEYCHAIN.xml: six entries in file order, Base64 text verbatim with its newlines and indentation")
    func reactNativeKeychainFile() throws {
        let (data, path) = try realFixture("rnkeychain-conceal-eclipse7-RN_KEYCHAIN.xml")
        let entries = try SharedPreferencesReader.read(data, path: path)
        #expect(entries.map(\.name) == ["staging:u", "staging:c", ":p", "staging:p", ":u", ":c"])

        let file = try #require(String(data: data, encoding: .utf8))
        for entry in entries {
            guard case .string(let text) = entry.value else {
                Issue.record("\(entry.name) is not a string")
                continue
            }
            #expect(text == rawElementText(file, name: entry.name), "\(entry.name) is not verbatim")
        }
        #expect(entries[0].value == .string("AQIvZ0rae6csEKp09v5UvJfWyehtBM3rtPHsRJIPVxHyyaZGy/v9xFnGv18=\n    "))
        #expect(entries[1].value == .string("FacebookConceal"))
        #expect(entries[5].value == .string("FacebookConceal"))
        guard case .string(let user) = entries[4].value, case .string(let longValue) = entries[3].value else {
            Issue.record("values are not strings")
            return
        }
        #expect(
            user == "AQL+SIyCOQTbwB84By9oa1NNruzfEO3xQMx/Qj5IQBWbPQ+w83nDf3vI1qo6CVvG9+ikvN4L3Ccd\nrKq5lPnT1bE=\n    ")
        #expect(longValue.split(separator: "\n", omittingEmptySubsequences: false).count == 17)
        #expect(longValue.hasSuffix("EEHOR\n    "))
        // The Base64 decodes once the whitespace Android wrapped it with is removed.
        let compact = longValue.filter { !$0.isWhitespace }
        #expect(Data(base64Encoded: compact)?.first == 0x01)
    }

    @Test("crypto.KEY_256.xml: cipher_key with its trailing newline and indentation")
    func concealKeyFile() throws {
        let (data, path) = try realFixture("rnkeychain-conceal-eclipse7-crypto.KEY_256.xml")
        let entries = try SharedPreferencesReader.read(data, path: path)
        #expect(
            entries == [
                PreferenceEntry(
                    name: "cipher_key", value: .string("f8WwucPW1fxcJ/sb65X2Dz9qkd4xrOZmKdmyIgOTtRM=\n    "))
            ])
    }

    @Test("expo SecureStore.xml files: XML-escaped JSON comes back unescaped once, with org.json's \\/ kept")
    func expoSecureStoreFiles() throws {
        let (meto, metoPath) = try realFixture("expo-securestore-metocare-SecureStore.xml")
        let entries = try SharedPreferencesReader.read(meto, path: metoPath)
        #expect(entries.map(\.name) == ["key_v1-meto_install_id", "key_v1-meto_refresh", "key_v1-meto_access"])
        for entry in entries {
            guard case .string(let json) = entry.value else {
                Issue.record("\(entry.name) is not a string")
                continue
            }
            #expect(json.hasPrefix("{\"ct\":\""))
            #expect(json.contains("\\/"), "the JSON escape \\/ must survive XML unescaping")
            #expect(!json.contains("&quot;"))
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
            #expect(object["keystoreAlias"] as? String == "key_v1")
            #expect(object["tlen"] as? Int == 128)
            #expect(object["usesKeystoreSuffix"] as? Bool == true)
        }
        guard case .string(let first) = entries[0].value else { return }
        #expect(
            first.hasPrefix("{\"ct\":\"p1MWAyTriAtHAqrxuQ3jI9kgataahrEz0efOv8GAK+E1GF\\/2eOI8KTJUY443mMs++924BA==\","))

        let (expoGo, expoGoPath) = try realFixture("expo-securestore-expogo-scoped-key_v1-SecureStore.xml")
        let single = try SharedPreferencesReader.read(expoGo, path: expoGoPath)
        #expect(single.map(\.name) == ["key_v1-accessSecureToken"])
        #expect(
            single.first?.value
                == .string(
                    #"{"ct":"5l33h+R7Z3VjcZU3SWeIsIOzCKlbQjrkZ2Jmfzz85oY=","iv":"Ct4nJE6stvb9N3P3","tlen":128,"scheme":"aes","usesKeystoreSuffix":true,"keystoreAlias":"key_v1","requireAuthentication":false}"#
                ))
    }

    // MARK: Element types

    @Test("every element type, in file order, duplicates kept")
    func everyElementType() throws {
        let entries = try readXML(
            xml(
                """
                    <string name="plain">hello</string>
                    <string name="empty" />
                    <string name="empty2"></string>
                    <string name="spaces">  two words \n  next line\t</string>
                    <string name="escaped">&lt;a href=&quot;x&quot;&gt; &amp; &apos;q&apos; &#233;&#x263A;&#10;</string>
                    <string name="cdata"><![CDATA[<raw> & stuff]]> tail</string>
                    <!-- a comment between entries -->
                    <string name="commented">a<!-- inside -->b</string>
                    <boolean name="yes" value="true" />
                    <boolean name="no" value="false" />
                    <int name="count" value="-42" />
                    <int name="max" value="2147483647" />
                    <long name="big" value="-9223372036854775808" />
                    <float name="ratio" value="1.5" />
                    <float name="exponent" value="1.0E10" />
                    <float name="nan" value="NaN" />
                    <double name="precise" value="0.1" />
                    <set name="tags">
                        <string>b</string>
                        <string>a</string>
                        <string />
                    </set>
                    <set name="none" />
                    <string name="plain">again</string>
                    <string name="naïve &amp; ☺">unicode name</string>
                """))
        #expect(entries.count == 20)
        let expected: [(String, PreferenceValue)] = [
            ("plain", .string("hello")),
            ("empty", .string("")),
            ("empty2", .string("")),
            ("spaces", .string("  two words \n  next line\t")),
            ("escaped", .string("<a href=\"x\"> & 'q' é☺\n")),
            ("cdata", .string("<raw> & stuff tail")),
            ("commented", .string("ab")),
            ("yes", .boolean(true)),
            ("no", .boolean(false)),
            ("count", .int(-42)),
            ("max", .int(Int32.max)),
            ("big", .long(Int64.min)),
            ("ratio", .float(1.5)),
            ("exponent", .float(1.0e10)),
        ]
        for (index, (name, value)) in expected.enumerated() {
            #expect(entries[index] == PreferenceEntry(name: name, value: value))
        }
        #expect(entries[14].name == "nan")
        if case .float(let nan) = entries[14].value { #expect(nan.isNaN) } else { Issue.record("nan is not a float") }
        #expect(entries[15] == PreferenceEntry(name: "precise", value: .double(0.1)))
        #expect(entries[16] == PreferenceEntry(name: "tags", value: .stringSet(["b", "a", ""])))
        #expect(entries[17] == PreferenceEntry(name: "none", value: .stringSet([])))
        #expect(entries[18] == PreferenceEntry(name: "plain", value: .string("again")))
        #expect(entries[19] == PreferenceEntry(name: "naïve & ☺", value: .string("unicode name")))
    }

    @Test("an empty map and a map without declaration read as no entries")
    func emptyMaps() throws {
        #expect(try readXML("<map />").isEmpty)
        #expect(
            try readXML("\u{FEFF}<?xml version='1.0' encoding='utf-8' standalone='yes' ?>\r\n<map>\r\n</map>").isEmpty)
    }

    @Test("errors name the line of the element, also past line 65535")
    func errorLines() {
        let lines = String(repeating: "\n", count: 70_000)
        do {
            _ = try readXML("<map>\(lines)<int name=\"n\" value=\"x\" /></map>")
            Issue.record("no error")
        } catch {
            #expect(error.message.contains("line 70001"), "\(error.message)")
        }
    }

    @Test("concurrent reads, good and bad, on many threads give the same entries")
    func concurrentReads() async throws {
        let (data, path) = try realFixture("rnkeychain-conceal-eclipse7-RN_KEYCHAIN.xml")
        let expected = try SharedPreferencesReader.read(data, path: path)
        let bad = Data("<map><int name='x' value='y'/></map>".utf8)
        try await withThrowingTaskGroup(of: [PreferenceEntry].self) { group in
            for index in 0..<64 {
                group.addTask {
                    if index.isMultiple(of: 2) { return try SharedPreferencesReader.read(data, path: path) }
                    #expect(throws: DumpError.self) { try SharedPreferencesReader.read(bad, path: path) }
                    return expected
                }
            }
            for try await entries in group { #expect(entries == expected) }
        }
    }

    // MARK: Detection

    @Test("looksLike: SharedPreferences files yes, other XML and other formats no")
    func detection() throws {
        for name in [
            "rnkeychain-conceal-eclipse7-RN_KEYCHAIN.xml", "rnkeychain-conceal-eclipse7-crypto.KEY_256.xml",
            "expo-securestore-metocare-SecureStore.xml", "expo-securestore-expogo-scoped-key_v1-SecureStore.xml",
        ] {
            let (data, _) = try realFixture(name)
            #expect(SharedPreferencesReader.looksLike(data.prefix(512)), "\(name)")
        }
        for yes in ["<map/>", "<map>", "\u{FEFF}<map>", "  <!-- c --> <map\n>", "<?xml version='1.0'?><map />"] {
            #expect(SharedPreferencesReader.looksLike(Data(yes.utf8)), "\(yes)")
        }
        let plist =
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n<plist version=\"1.0\"><array/></plist>"
        for no in [
            "", "<mapping>", "<map", "[{\"a\":1}]", "SQLite format 3\0", "<?xml version='1.0'", plist,
            "<!-- unterminated <map>",
        ] {
            #expect(!SharedPreferencesReader.looksLike(Data(no.utf8)), "\(no)")
        }
    }

    // MARK: Hostile and malformed input

    /// A local file the hostile documents point their entities at: a fixture whose content is known.
    private static let secretFile = realWorld.appendingPathComponent("rnkeychain-conceal-eclipse7-crypto.KEY_256.xml")
        .path
    private static let secretText = "f8WwucPW1fxcJ"

    struct BadInput: CustomStringConvertible, Sendable {
        var description: String
        var data: Data
        var messageContains: String? = nil
    }

    static let badInputs: [BadInput] = {
        var cases: [BadInput] = []
        func add(_ name: String, _ text: String, _ message: String? = nil) {
            cases.append(BadInput(description: name, data: Data(text.utf8), messageContains: message))
        }
        let real =
            (try? Data(contentsOf: realWorld.appendingPathComponent("rnkeychain-conceal-eclipse7-RN_KEYCHAIN.xml")))
            ?? Data()
        cases.append(BadInput(description: "empty", data: Data(), messageContains: "empty"))
        add("whitespace only", "  \n ")
        cases.append(
            BadInput(description: "truncated", data: real.prefix(real.count / 2), messageContains: "truncated"))
        add("wrong magic: JSON", "{\"a\": \"b\"}")
        cases.append(
            BadInput(
                description: "wrong magic: SQLite",
                data: Data("SQLite format 3\0".utf8) + Data(repeating: 0, count: 100)))
        cases.append(BadInput(description: "wrong magic: binary", data: Data((0..<256).map { UInt8($0) })))
        add("wrong root", "<plist version=\"1.0\"><dict/></plist>", "root element is <plist>")
        add("int not a number", xml("<int name=\"n\" value=\"abc\" />"), "line 3")
        add("int overflow", xml("<int name=\"n\" value=\"2147483648\" />"), "<int>")
        add("int with spaces", xml("<int name=\"n\" value=\" 1\" />"))
        add("long not a number", xml("<long name=\"n\" value=\"1.5\" />"), "<long>")
        add("float not a number", xml("<float name=\"n\" value=\"abc\" />"), "<float>")
        add("float hexadecimal", xml("<float name=\"n\" value=\"0x1p3\" />"))
        add("boolean not a boolean", xml("<boolean name=\"b\" value=\"yes\" />"), "<boolean>")
        add("value missing", xml("<int name=\"n\" />"), "no value")
        add("name missing", xml("<string>orphan</string>"), "no name")
        add("unknown element", xml("<byte-array name=\"b\" num=\"1\">00</byte-array>"), "unknown element <byte-array>")
        add("null element", xml("<null name=\"n\" />"), "unknown element <null>")
        add(
            "namespaced element", "<map xmlns:a=\"urn:x\"><a:string name=\"s\">v</a:string></map>",
            "unknown element <a:string>")
        add("element inside string", xml("<string name=\"s\">a<b/>c</string>"), "<string>")
        add("text inside map", xml("loose text"), "text")
        add("set inside set", xml("<set name=\"s\"><set name=\"t\" /></set>"), "<set>")
        add("element inside int", xml("<int name=\"n\" value=\"1\"><x/></int>"), "<int>")
        add("undeclared entity", xml("<string name=\"s\">&secret;</string>"))
        add("mismatched tags", xml("<string name=\"s\">v</int>"))
        add("two roots", "<map /><map />")
        let depth = 10_000
        add("10k nested elements", String(repeating: "<map>", count: depth) + String(repeating: "</map>", count: depth))
        add(
            "10k nested sets",
            "<map>" + String(repeating: "<set name=\"s\">", count: depth) + String(repeating: "</set>", count: depth)
                + "</map>")
        cases.append(
            BadInput(
                description: "invalid UTF-8",
                data: Data("<?xml version='1.0' encoding='utf-8'?><map><string name=\"s\">".utf8)
                    + Data([0xC3, 0x28, 0xFF])
                    + Data("</string></map>".utf8)))
        cases.append(
            BadInput(
                description: "NUL byte",
                data: Data("<map><string name=\"s\">a".utf8) + Data([0]) + Data("b</string></map>".utf8)))
        add("unsupported encoding", "<?xml version='1.0' encoding='x-no-such-charset'?><map />")
        cases.append(
            BadInput(
                description: "larger than the XML limit",
                data: Data("<map><string name=\"s\">".utf8) + Data(repeating: 0x41, count: DumpLimits.maxXMLBytes)
                    + Data("</string></map>".utf8),
                messageContains: "limit"))
        add(
            "huge attribute", "<map><string name=\"" + String(repeating: "n", count: 20_000_000) + "\">v</string></map>"
        )
        let laughs = """
            <?xml version="1.0"?>
            <!DOCTYPE map [
              <!ENTITY lol "lol">
              <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
              <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
              <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
              <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
              <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
              <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
              <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
              <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
              <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
            ]>
            <map><string name="s">&lol9;</string><string name="t" v="&lol9;">x</string></map>
            """
        add("billion laughs", laughs, "line 2: the document declares a DTD")
        add(
            "external entity to a local file",
            "<?xml version=\"1.0\"?>\n<!DOCTYPE map [<!ENTITY xxe SYSTEM \"file://\(secretFile)\">]>\n<map><string name=\"s\">&xxe;</string></map>",
            "line 2: the document declares a DTD")
        add(
            "parameter entity to a local file",
            "<!DOCTYPE map [<!ENTITY % p SYSTEM \"file://\(secretFile)\"> %p;]><map />", "DTD")
        add("external DTD", "<!DOCTYPE map SYSTEM \"file://\(secretFile)\"><map />", "DTD")
        add("harmless DOCTYPE", "<!DOCTYPE map><map />", "DTD")
        add(
            "DOCTYPE after comments on line 3", "<?xml version='1.0'?>\n<!-- c -->\n<!DOCTYPE map []>\n<map />",
            "line 3")
        return cases
    }()

    @Test(
        "malformed and hostile input: a DumpError naming the path, never a crash, a hang or a leak",
        .timeLimit(.minutes(5)), arguments: badInputs)
    func malformed(_ input: BadInput) {
        let path = "/dumps/\(input.description.replacingOccurrences(of: " ", with: "-")).xml"
        do {
            let entries = try SharedPreferencesReader.read(input.data, path: path)
            Issue.record("read \(entries.count) entries from bad input")
        } catch {
            #expect(error.kind == .malformed)
            #expect(error.path == path)
            #expect(error.description.hasPrefix(path + ": "))
            #expect(!error.message.contains(Self.secretText))
            #expect(!error.message.contains("lollol"))
            if let expected = input.messageContains {
                #expect(error.message.contains(expected), "\(error.message)")
            }
        }
    }

    @Test("an external entity's or DTD's file is never opened (a FIFO would block the reader)", .timeLimit(.minutes(5)))
    func externalFilesNeverOpened() throws {
        let folder = try ScratchFolder("prefs-fifo")
        let fifo = folder.path("fifo")
        try #require(mkfifo(fifo, 0o600) == 0)
        let documents = [
            "<!DOCTYPE map [<!ENTITY xxe SYSTEM \"file://\(fifo)\">]><map><string name=\"s\">&xxe;</string></map>",
            "<!DOCTYPE map [<!ENTITY xxe SYSTEM \"\(fifo)\">]><map><string name=\"s\" v=\"&xxe;\">x</string></map>",
            "<!DOCTYPE map [<!ENTITY % p SYSTEM \"file://\(fifo)\"> %p;]><map />",
            "<!DOCTYPE map SYSTEM \"file://\(fifo)\"><map />",
            "<?xml version='1.0'?><?xml-stylesheet href=\"file://\(fifo)\"?><map xmlns:xi=\"http://www.w3.org/2001/XInclude\"><xi:include href=\"file://\(fifo)\"/></map>",
        ]
        for text in documents {
            #expect(throws: DumpError.self) { try readXML(text) }
        }
    }

    @Test("libxml2 writes nothing to standard error for bad input")
    func silentOnStandardError() throws {
        let marker = "apex-stderr-probe-\(UUID().uuidString)"
        let folder = try ScratchFolder("stderr-probe")
        let capture = folder.path("\(marker).log")
        let output = open(capture, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(output >= 0)
        defer { unlink(capture) }
        let saved = dup(2)
        try #require(saved >= 0)
        #expect(dup2(output, 2) == 2)
        close(output)
        let bad = [
            "<map><string name=\"s\">v</int></map>", "<map>&undeclared;</map>",
            "<!DOCTYPE map [<!ENTITY a \"b\">]><map/>",
            "<?xml version='1.0' encoding='x-no-such-charset'?><map />",
            "<map><string name=\"s\">\u{FFFE}</string></map>",
            String(repeating: "<a>", count: 5000),
        ]
        var failures = 0
        for text in bad {
            do { _ = try readXML(text, path: "/dumps/\(marker).xml") } catch { failures += 1 }
        }
        var invalidUTF8 = Data("<map><string name=\"s\">".utf8)
        invalidUTF8.append(contentsOf: [0xFF, 0xFE, 0xC3])
        do { _ = try SharedPreferencesReader.read(invalidUTF8, path: "/dumps/\(marker).xml") } catch { failures += 1 }
        _ = "probe: capture works\n".withCString { write(2, $0, strlen($0)) }
        dup2(saved, 2)
        close(saved)
        #expect(failures == bad.count + 1)
        let captured = String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: capture))) ?? Data(), as: UTF8.self)
        #expect(captured.contains("probe: capture works"), "standard error was not captured")
        // Other tests may write to standard error meanwhile: give their text back, and look only for libxml2's.
        let others = captured.replacingOccurrences(of: "probe: capture works\n", with: "")
        if !others.isEmpty { FileHandle.standardError.write(Data(others.utf8)) }
        for libxmlOutput in [
            "parser error", "namespace error", "Entity: line", "encoding error", "I/O error", "Excessive depth",
        ] {
            #expect(!captured.contains(libxmlOutput), "libxml2 printed: \(captured)")
        }
    }
}
