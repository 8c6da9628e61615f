import ApexDumps
import ApexKeychain
import ApexMigration
import Foundation
import Testing

/// `SourceItem` keeps its fields in a shared box (a copy costs one reference count): it must still behave as a
/// value.
@Suite("SourceItem")
struct SourceItemTests {
    static let item = SourceItem(
        library: .expoSecureStore, platform: .ios,
        origin: SourceOrigin(path: "dump.plist", format: .iosPlist, location: "item 1"),
        source: SourceDescription(itemClass: "genp", service: "app", account: "token"),
        value: .value(Data("sample-value".utf8)),
        target: TargetItem(service: "app", key: "token", kind: .string, options: SetOptions()), notes: ["first"])

    @Test("a changed copy leaves the original as it was, field by field")
    func copiesAreValues() {
        let original = Self.item
        var copy = original
        #expect(copy == original)
        copy.notes.append("second")
        copy.verdict = .skipped("filtered")
        copy.target?.key = "other"
        copy.source.account = "changed"
        copy.value = .sealed("gone")
        copy.origin.location = "item 2"
        #expect(original.notes == ["first"])
        #expect(original.verdict == .migrate)
        #expect(original.target?.key == "token")
        #expect(original.source.account == "token")
        #expect(original.value == .value(Data("sample-value".utf8)))
        #expect(original.origin.location == "item 1")
        #expect(copy.notes == ["first", "second"])
        #expect(copy != original)
    }

    @Test("equal fields make equal items, whether or not they share storage")
    func equality() {
        var rebuilt = SourceItem(
            library: .expoSecureStore, platform: .ios,
            origin: SourceOrigin(path: "dump.plist", format: .iosPlist, location: "item 1"),
            source: SourceDescription(itemClass: "genp", service: "app", account: "token"),
            value: .value(Data("sample-value".utf8)),
            target: TargetItem(service: "app", key: "token", kind: .string, options: SetOptions()), notes: ["first"])
        #expect(rebuilt == Self.item)
        rebuilt.platform = .android
        #expect(rebuilt != Self.item)
    }
}
