import ApexKeychain
import Foundation

/// How `store info` shows an ``ItemInfo``: aligned `name: value` lines, or JSON.
enum ItemInfoFormat {
    /// Aligned `name: value` lines. Control characters in the key and label are escaped (`\u{A}`), so that
    /// each field stays on its line.
    static func text(_ info: ItemInfo) -> String {
        var fields: [(String, String)] = [
            ("key", DisplayText.escaped(info.key)),
            ("label", info.label.map { $0.isEmpty ? "\"\"" : DisplayText.escaped($0) } ?? "(none)"),
            ("accessible", info.accessible.rawValue),
            ("accessControl", info.accessControl.rawValue),
            ("synchronizable", String(info.synchronizable)),
            ("created", iso8601(milliseconds: info.createdAt)),
            ("modified", iso8601(milliseconds: info.modifiedAt)),
        ]
        if let android = info.android {
            fields.append(("securityLevel", android.securityLevel.rawValue))
        }
        let width = fields.map(\.0.count).max() ?? 0
        return fields.map { name, value in
            name + ":" + String(repeating: " ", count: width - name.count + 1) + value + "\n"
        }.joined()
    }

    /// The item info as a JSON object with sorted keys, and a newline.
    /// - Throws: an I/O error (74) if it can't be encoded.
    static func json(_ info: ItemInfo) throws(CLIError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(info), as: UTF8.self) + "\n"
        } catch {
            throw CLIError(.ioError, "can't encode the item info of '\(info.key)': \(error)")
        }
    }

    /// A date in milliseconds since 1970 as ISO 8601 in UTC, with milliseconds (`2026-01-01T00:00:00.000Z`).
    static func iso8601(milliseconds: Int64) -> String {
        let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
    }
}
