import ApexDumps
import ApexKeychain
import ApexMigration
import Foundation
import Testing

/// The report's fields hold typed values where the set is closed, and what a dump holds outside it as found; the
/// JSON is the same bytes either way.
@Suite("Report: typed fields")
struct ReportFieldTypesTests {
    static func item(itemClass: String?, library: SourceLibrary = .reactNativeKeychain) -> SourceItem {
        SourceItem(
            library: library, platform: .ios,
            origin: SourceOrigin(path: "dump.plist", format: .iosPlist, location: "item 1"),
            source: SourceDescription(
                itemClass: itemClass, service: "app", account: "token", protection: ["pdmn": "ck"]),
            value: .value(Data("v".utf8)),
            target: TargetItem(
                service: "app", key: "token", kind: .bytes,
                options: SetOptions(accessible: .whenUnlockedThisDeviceOnly, accessControl: .biometryAny)))
    }

    static func report(_ items: [SourceItem], device: String = "ios-no-biometrics") -> MigrationReport {
        MigrationReport(
            plan: MigrationPlan(
                actions: items.map { PlannedAction(item: $0, action: .create) },
                dumps: [
                    DumpSummary(path: "dump.plist", format: .iosPlist, library: .reactNativeKeychain, platform: .ios)
                ]
            ),
            device: device, includeLabels: true)
    }

    static func encoded(_ report: MigrationReport) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(report) + Data("\n".utf8)
    }

    @Test("format, library, platform, item class, target kind, accessible and access control are typed values")
    func typed() throws {
        let report = Self.report([Self.item(itemClass: "genp")])
        let source = try #require(report.sources.first)
        #expect(source.format == .iosPlist && source.library == .reactNativeKeychain && source.platform == .ios)
        let item = try #require(report.items.first)
        #expect(item.source.library == .reactNativeKeychain && item.source.platform == .ios)
        #expect(item.source.class == .known(.genericPassword) && item.source.class?.known == .genericPassword)
        let target = try #require(item.target)
        #expect(target.kind == .bytes)
        #expect(target.accessible == .whenUnlockedThisDeviceOnly && target.accessControl == .biometryAny)
        #expect(report.targetDevice == "ios-no-biometrics")
    }

    @Test(
        "an item class the keychain does not have is kept as found, encoded as its code, and decodes back",
        arguments: ["cert", "keys", "xyz1", "GENP", "", "a\"b\\c\u{1}"])
    func classAsFound(code: String) throws {
        let report = Self.report([Self.item(itemClass: code)])
        let found = try #require(report.items.first?.source.class)
        #expect(found.code == code)
        #expect(found.known == KeychainItemClass(rawValue: code))
        if KeychainItemClass(rawValue: code) == nil { #expect(found == .other(code)) }
        // The direct writer and JSONEncoder agree byte for byte, and the code is the JSON's `class` as it is.
        let json = report.json()
        #expect(json == (try Self.encoded(report)))
        let object = try #require(JSONSerialization.jsonObject(with: json) as? [String: Any])
        let source = try #require(((object["items"] as? [[String: Any]])?.first)?["source"] as? [String: Any])
        #expect(source["class"] as? String == code)
        #expect(try JSONDecoder().decode(MigrationReport.self, from: json) == report)
    }

    @Test("an Android item has no class: JSON null, decoded as nil")
    func noClass() throws {
        let report = Self.report([Self.item(itemClass: nil, library: .expoSecureStore)])
        #expect(report.items.first?.source.class == nil)
        #expect(report.json() == (try Self.encoded(report)))
        #expect(String(decoding: report.json(), as: UTF8.self).contains("\"class\" : null"))
        #expect(try JSONDecoder().decode(MigrationReport.self, from: report.json()) == report)
    }

    @Test("an item class compares by its code: a known code given as other is the known class")
    func classByCode() {
        #expect(MigrationReport.ItemClassFound.other("genp") == .known(.genericPassword))
        #expect(MigrationReport.ItemClassFound("inet") == .known(.internetPassword))
        #expect(MigrationReport.ItemClassFound("inet") != .other("genp"))
        #expect(Set([MigrationReport.ItemClassFound.other("cert"), .known(.certificate)]).count == 1)
    }

    @Test("the target device is the JSON's `device`, the text's and Markdown's heading; empty in an inventory")
    func targetDevice() throws {
        let report = Self.report([Self.item(itemClass: "genp")], device: "android-10")
        let object = try #require(JSONSerialization.jsonObject(with: report.json()) as? [String: Any])
        #expect(object["device"] as? String == "android-10")
        #expect(report.text().hasPrefix("Dry run for device android-10: nothing was written."))
        #expect(report.markdown().contains("Device: `android-10`"))
        let inventory = MigrationReport(
            inventory: [Self.item(itemClass: "genp")],
            dumps: [DumpSummary(path: "dump.plist", format: .iosPlist, library: .reactNativeKeychain, platform: .ios)],
            includeLabels: false)
        #expect(inventory.targetDevice == "")
    }
}
