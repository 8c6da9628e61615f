import ApexDumpModel
import Foundation

/// The JSON report written straight into bytes, in the exact form `JSONEncoder` gives with
/// `[.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]` (two-space indent, `"key" : value`, keys in UTF-8
/// byte order, empty containers as `[\n\n<indent>]`): `JSONEncoder` builds a tree of boxed values for the whole
/// report first, which costs seconds and hundreds of MiB for 100k items. Tests compare the two byte for byte.
struct ReportJSON {
    /// What has been written: the finished runs of bytes (parts other writers made are kept as they are, not
    /// copied), then the run being written.
    private var runs: [[UInt8]] = []
    private var bytes: [UInt8] = []
    private(set) var indent = 0
    /// Whether the open container has a member yet.
    private var first = true

    /// Where finished bytes go when ``flush()`` is called; nil: they are kept until ``data(appending:)``.
    private var sink: ReportSink?

    init(capacity: Int, sink: ReportSink? = nil) {
        bytes.reserveCapacity(capacity)
        self.sink = sink
    }

    /// Hands what has been written so far to the sink, and forgets it (no-op without a sink).
    mutating func flush() {
        guard let sink else { return }
        for run in runs { sink.emit(run) }
        sink.emit(bytes)
        runs = []
        bytes = []
    }

    /// A writer for a run of elements inside a container open at `indent` - 2, as if `members` elements came
    /// before them (so that the first one written is preceded by a separator when `members` > 0).
    init(capacity: Int, indent: Int, members: Int) {
        bytes.reserveCapacity(capacity)
        self.indent = indent
        first = members == 0
    }

    /// Appends bytes another writer made for the open container (``init(capacity:indent:members:)``), which
    /// held `members` elements.
    mutating func append(_ written: ReportJSON, members: Int) {
        runs.append(bytes)
        runs.append(contentsOf: written.runs)
        runs.append(written.bytes)
        bytes = []
        if members > 0 { first = false }
    }

    /// Everything written, then `suffix`, joined once into one buffer.
    func data(appending suffix: UInt8) -> Data {
        var data = Data(capacity: runs.reduce(bytes.count + 1) { $0 + $1.count })
        for run in runs { data.append(contentsOf: run) }
        data.append(contentsOf: bytes)
        data.append(suffix)
        return data
    }

    // MARK: Containers

    /// An object whose members `body` writes, in the order given: callers give keys in UTF-8 byte order.
    mutating func object(_ body: (inout ReportJSON) -> Void) {
        container(open: UInt8(ascii: "{"), close: UInt8(ascii: "}"), body)
    }

    mutating func array(_ body: (inout ReportJSON) -> Void) {
        container(open: UInt8(ascii: "["), close: UInt8(ascii: "]"), body)
    }

    private mutating func container(open: UInt8, close: UInt8, _ body: (inout ReportJSON) -> Void) {
        bytes.append(open)
        bytes.append(UInt8(ascii: "\n"))
        indent += 2
        let outer = first
        first = true
        body(&self)
        first = outer
        indent -= 2
        // An empty container is `[`, two newlines, the indent and `]`, as JSONEncoder writes it.
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent))
        bytes.append(close)
    }

    /// The separator before a member, then the indent.
    private mutating func nextMember() {
        if !first { bytes.append(contentsOf: [UInt8(ascii: ","), UInt8(ascii: "\n")]) }
        first = false
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent))
    }

    /// `"key" : ` at the start of an object member.
    mutating func key(_ key: StaticString) {
        nextMember()
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: " "), UInt8(ascii: ":"), UInt8(ascii: " ")])
    }

    /// `"key" : ` for a key that is data (escaped as any string).
    mutating func key(dynamic key: String) {
        nextMember()
        string(key)
        bytes.append(contentsOf: [UInt8(ascii: " "), UInt8(ascii: ":"), UInt8(ascii: " ")])
    }

    /// Starts an array element.
    mutating func element() { nextMember() }

    // MARK: Values

    mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var start = 0
            for (index, byte) in utf8.enumerated()
            where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                start = index + 1
                switch byte {
                case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
                case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
                case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
                case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [
                        UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                        hex[Int(byte >> 4)],
                        hex[Int(byte & 0xF)],
                    ])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func optional(_ text: String?) {
        if let text { string(text) } else { bytes.append(contentsOf: "null".utf8) }
    }

    mutating func bool(_ value: Bool) { bytes.append(contentsOf: (value ? "true" : "false").utf8) }

    mutating func int(_ value: Int) { bytes.append(contentsOf: String(value).utf8) }

    /// A string-to-string dictionary, its keys in UTF-8 byte order.
    mutating func dictionary(_ dictionary: [String: String]) {
        let sorted = dictionary.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        object { json in
            for (key, value) in sorted {
                json.key(dynamic: key)
                json.string(value)
            }
        }
    }
}

/// Where a report written piece by piece goes: the first error stops the writing and is kept for the caller.
/// Only the thread that writes the report uses it (the writers of chunks on other cores have none), which is
/// why it may sit in a `Sendable` writer.
final class ReportSink: @unchecked Sendable {
    private let write: (Data) throws -> Void
    private(set) var error: (any Error)?

    init(_ write: @escaping (Data) throws -> Void) { self.write = write }

    func emit(_ bytes: [UInt8]) {
        guard error == nil, !bytes.isEmpty else { return }
        do { try write(Data(bytes)) } catch { self.error = error }
    }
}

extension MigrationReport {
    /// The report as JSON (the bytes of ``json()``), handed to `write` piece by piece as it is produced, so a
    /// 100k-item report is never held whole: `batch` items are rendered (on every core) and handed over at a time.
    /// Stops at the first error `write` throws, and throws it.
    public func writeJSON(batch: Int = 8192, to write: @escaping (Data) throws -> Void) throws {
        let sink = ReportSink(write)
        var json = jsonWriter(sink: sink, batch: max(1, batch))
        json.flush()
        sink.emit([UInt8(ascii: "\n")])
        if let error = sink.error { throw error }
    }

    /// The report written as JSON (see ``json()``), in runs of bytes; with a sink, handed to it in batches.
    func jsonWriter(sink: ReportSink? = nil, batch: Int = .max) -> ReportJSON {
        var json = ReportJSON(capacity: 4096, sink: sink)
        json.object { json in
            json.key("device")
            json.string(targetDevice)
            json.key("dryRun")
            json.bool(dryRun)
            json.key("formatVersion")
            json.int(formatVersion)
            json.key("items")
            json.array { json in
                // Chunks of items are written on every core, each by its own writer, and joined in order; with a
                // sink, one batch of items at a time, each handed over before the next is written.
                let (items, indent) = (items, json.indent)
                let batch = sink == nil ? max(1, items.count) : batch
                for start in stride(from: 0, to: items.count, by: batch) {
                    let count = min(batch, items.count - start)
                    let parts = concurrentChunks(count: count) { range in
                        var part = ReportJSON(
                            capacity: range.count * 1000, indent: indent, members: start + range.lowerBound)
                        for index in range {
                            part.element()
                            items[start + index].write(&part)
                        }
                        return part
                    }
                    for part in parts { json.append(part, members: items.count) }
                    json.flush()
                }
            }
            json.key("sources")
            json.array { json in
                for source in sources {
                    json.element()
                    json.object { json in
                        json.key("format")
                        json.string(source.format.rawValue)
                        json.key("library")
                        json.optional(source.library?.rawValue)
                        json.key("notes")
                        json.array { json in
                            for note in source.notes {
                                json.element()
                                json.string(note)
                            }
                        }
                        json.key("path")
                        json.string(source.path)
                        json.key("platform")
                        json.string(source.platform.rawValue)
                        json.key("sealed")
                        json.object { json in
                            for (protection, count) in source.sealed.sorted(by: { $0.key < $1.key }) {
                                json.key(dynamic: protection)
                                json.int(count)
                            }
                        }
                    }
                }
            }
            json.key("store")
            json.optional(store)
            json.key("summary")
            summary.write(&json)
            json.key("timestamp")
            json.optional(timestamp)
            json.key("toolVersion")
            json.optional(toolVersion)
            json.key("verdict")
            verdict.write(&json)
        }
        return json
    }
}

extension MigrationReport.Item {
    /// As `encode(to:)`: `target`, `action` and `reason` only with an action, `result` and `resultReason` only
    /// with a result.
    fileprivate func write(_ json: inout ReportJSON) {
        json.object { json in
            if let action {
                json.key("action")
                json.string(action.rawValue)
            }
            json.key("notes")
            json.array { json in
                for note in notes {
                    json.element()
                    json.string(note)
                }
            }
            if action != nil {
                json.key("reason")
                json.optional(reason)
                json.key("reasonCode")
                json.optional(cause?.code)
                if let result {
                    json.key("result")
                    json.string(result.rawValue)
                    json.key("resultReason")
                    json.optional(resultReason)
                }
            }
            json.key("source")
            source.write(&json)
            if action != nil {
                json.key("state")
                json.optional(state?.rawValue)
                json.key("target")
                if let target { target.write(&json) } else { json.optional(nil) }
            }
        }
    }
}

extension MigrationReport.ItemSource {
    fileprivate func write(_ json: inout ReportJSON) {
        json.object { json in
            json.key("accessGroup")
            json.optional(accessGroup)
            json.key("account")
            json.optional(account)
            json.key("class")
            json.optional(`class`?.code)
            json.key("library")
            json.string(library.rawValue)
            json.key("location")
            json.string(location)
            json.key("path")
            json.string(path)
            json.key("platform")
            json.string(platform.rawValue)
            json.key("protection")
            json.dictionary(protection)
            json.key("server")
            json.optional(server)
            json.key("service")
            json.optional(service)
        }
    }
}

extension MigrationReport.ItemTarget {
    fileprivate func write(_ json: inout ReportJSON) {
        json.object { json in
            json.key("accessControl")
            json.optional(accessControl?.rawValue)
            json.key("accessGroup")
            json.optional(accessGroup)
            json.key("accessible")
            json.optional(accessible?.rawValue)
            json.key("key")
            json.string(key)
            json.key("kind")
            json.string(kind.rawValue)
            json.key("service")
            json.string(service)
            json.key("synchronizable")
            if let synchronizable { json.bool(synchronizable) } else { json.optional(nil) }
        }
    }
}

extension MigrationReport.Summary {
    fileprivate func write(_ json: inout ReportJSON) {
        json.object { json in
            for (key, value) in [
                ("blocked", blocked), ("conflict", conflict), ("create", create), ("exists", exists),
                ("failed", failed), ("found", found), ("givenUp", givenUp), ("pending", pending), ("sealed", sealed),
                ("shadowed", shadowed),
                ("skipped", skipped), ("verified", verified), ("written", written),
            ] as [(StaticString, Int)] {
                json.key(key)
                json.int(value)
            }
        }
    }
}

extension Verdict {
    fileprivate func write(_ json: inout ReportJSON) {
        json.object { json in
            json.key("alreadyThere")
            json.int(alreadyThere)
            json.key("groups")
            json.array { json in
                for group in groups {
                    json.element()
                    json.object { json in
                        json.key("count")
                        json.int(group.count)
                        json.key("needs")
                        json.string(group.needs.rawValue)
                        json.key("reasonCode")
                        json.optional(group.reasonCode?.code)
                        json.key("state")
                        json.string(group.state.rawValue)
                        json.key("what")
                        json.string(group.what)
                    }
                }
            }
            json.key("kind")
            json.string(kind.rawValue)
            for (key, value) in [
                ("leftBehind", leftBehind), ("leftOut", leftOut), ("migrated", migrated), ("olderCopies", olderCopies),
                ("secrets", secrets),
            ] as [(StaticString, Int)] {
                json.key(key)
                json.int(value)
            }
        }
    }
}
