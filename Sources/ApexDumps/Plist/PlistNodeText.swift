import Foundation

/// What reading dumps may write out. A binary plist's objects can be referred to over and over, so a small file
/// can stand for far more items, values and bytes than it holds. A run (``DumpReader/scan(paths:standardInput:backups:)``,
/// or one read) starts with ``run(items:values:bytes:)``; each file's read adds what its size allows to the run's
/// bytes and takes ``forFile(byteCount:)`` of what is left, spends it as it turns the tree into records (shared by every item and every entry of the read), and
/// the run keeps what it did not spend (``spend(from:to:)``): a folder of hostile files costs what one does.
struct ExpansionBudget {
    /// How many more items may be made.
    var items: Int
    /// How many more values (items, attributes, elements of `extra` containers) may be written out.
    var values: Int
    /// How many more bytes of keys and values may be written out: text as its UTF-8 bytes, data as its bytes,
    /// or as the length of its `hex:…` text in `extra`.
    var bytes: Int
    /// How many more bytes ``bytes`` may still grow by: each file read adds 16 times its size
    /// (``forFile(byteCount:)``) until the run's limit is reached.
    var bytesToGrant: Int
    /// The most bytes the run may write out, once every grant is made.
    var byteLimit: Int
    /// What is wrong with a file once each of the three is overspent, for ``IOSPlistReader``'s error.
    var problems: (items: String, values: String, bytes: String)

    /// A budget without bounds (a read whose values can't be shared: JSON).
    static let unlimited = ExpansionBudget(
        items: .max, values: .max, bytes: .max, bytesToGrant: 0, byteLimit: .max,
        problems: ("too many items", "too many values", "too many bytes"))

    /// The budget of a run: by default `DumpLimits/maxItemsPerRun` items and `DumpLimits/maxValuesPerRun`
    /// values for all its dumps together, and bytes 16 times the size of the files read and 1 MiB, for all of
    /// them together too, never more than `bytes` (by default `DumpLimits/maxFileBytes`).
    static func run(
        items: Int = DumpLimits.maxItemsPerRun, values: Int = DumpLimits.maxValuesPerRun,
        bytes: Int = DumpLimits.maxFileBytes
    ) -> ExpansionBudget {
        let start = min(bytes, 1 << 20)
        return ExpansionBudget(
            items: items, values: values, bytes: start, bytesToGrant: bytes - start, byteLimit: bytes,
            problems: (
                "the run's dumps would hold more than \(items) items together, the limit for one run, and it is refused",
                "the run's dumps would hold more than \(values) values together, the limit for one run, and it is refused",
                start == bytes
                    ? runByteLimit(bytes)
                    : "the run's dumps would write out more keys and values than 16 times their size and 1 MiB together, and it is refused"
            ))
    }

    private static func runByteLimit(_ bytes: Int) -> String {
        "the run's dumps would write out more than \(mebibytes(bytes)) of keys and values together, the limit for one run, and it is refused"
    }

    /// Adds what a file of `byteCount` bytes brings to the run (16 times its bytes, within the run's limit), and
    /// gives the part of what is left that its read may spend: no more than a real dump of its size holds, and far
    /// less than what a file of objects referring to shared objects over and over would expand to. Items: a
    /// quarter of its bytes (a real item takes a reference in its array, a dictionary and two references per
    /// attribute), and a few. Values: twice its bytes (every value takes a reference of at least a byte, bar
    /// Apple's sharing of equal ones), and a few thousand. Bytes: 16 times its bytes and 1 MiB (a shared key or
    /// value is a short string: a large one shared by every item would make a small dump a large store), and
    /// never more than `DumpLimits/maxFileBytes`; the run's files share one 1 MiB.
    mutating func forFile(byteCount: Int) -> ExpansionBudget {
        let grant = min(bytesToGrant, 16 * byteCount)
        bytes += grant
        bytesToGrant -= grant
        if bytesToGrant == 0, grant > 0 { problems.bytes = Self.runByteLimit(byteLimit) }
        var budget = self
        let items = byteCount / 4 + 16
        if items < budget.items {
            budget.items = items
            budget.problems.items = Self.expansion("it would hold far more items than a keychain dump of its size")
        }
        let values = 2 * byteCount + 4096
        if values < budget.values {
            budget.values = values
            budget.problems.values = Self.expansion("it would hold far more values than a keychain dump of its size")
        }
        let bytes = min(DumpLimits.maxFileBytes, 16 * byteCount + (1 << 20))
        // On a tie (a run's first file) the file's own limit is the one to name.
        if bytes <= budget.bytes {
            budget.bytes = bytes
            let limit =
                bytes == DumpLimits.maxFileBytes
                ? "the \(Self.mebibytes(bytes)) limit for a dump file"
                : "\(Self.mebibytes(bytes)) (16 times the file's size, and 1 MiB)"
            budget.problems.bytes = Self.expansion("its keys and values would take more than \(limit)")
        }
        return budget
    }

    /// Takes from this run's budget what a file's read spent: `start` was its budget (``forFile(byteCount:)``),
    /// `end` what it left.
    mutating func spend(from start: ExpansionBudget, to end: ExpansionBudget) {
        items -= start.items - end.items
        values -= start.values - end.values
        bytes -= start.bytes - end.bytes
    }

    /// Whether more was spent than there was.
    var isOverspent: Bool { items < 0 || values < 0 || bytes < 0 }

    /// What is wrong with the file whose read overspent (the first of items, values, bytes); nil when none is.
    var problem: String? {
        if items < 0 { return problems.items }
        if values < 0 { return problems.values }
        if bytes < 0 { return problems.bytes }
        return nil
    }

    private static func expansion(_ what: String) -> String {
        "the file refers to the same objects over and over: read out, \(what), and it is refused"
    }

    /// `512 MiB`, or `1.5 MiB`.
    static func mebibytes(_ bytes: Int) -> String {
        if bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        return String(format: "%.1f MiB", Double(bytes) / Double(1 << 20))
    }
}

extension PlistNode {
    /// What ``extraText(depth:budget:)`` gives back.
    enum ExtraText: Equatable {
        case text(String)
        /// The value nests deeper than `DumpLimits/maxDepth`.
        case tooDeep
        /// Writing the value out would use up the read's budget (a binary plist's shared objects can make a small
        /// file expand enormously).
        case tooLarge
        /// The value holds `<data>` that is not valid Base64; what is wrong.
        case damaged(String)
        /// The value reaches one container twice (a binary plist's shared reference), which no keychain dump has.
        case sharedContainer
    }

    /// The bytes the value takes written out as found: a string's UTF-8, data's bytes (`hex:…` text in `extra`
    /// doubles them), 0 for the rest (small scalars, and containers, which ``extraText(depth:budget:)`` counts
    /// element by element).
    func expandedByteCount(asHex: Bool) -> Int {
        switch self {
        case .string(let text): text.utf8.count
        case .data(let data): asHex ? 4 + 2 * data.count : data.count
        default: 0
        }
    }

    /// The text an `extra` entry keeps (both iOS readers write it so): strings as found, data as `hex:…`,
    /// numbers in decimal, booleans as `true`/`false`, dates in ISO 8601, null as `null`, containers as
    /// JSON-like text with sorted keys, and `?` for a UID.
    ///
    /// - Parameters:
    ///   - depth: the nesting depth of the container that holds the value.
    ///   - budget: what the read may still write out (see ``ExpansionBudget``); a container's elements are
    ///     taken from it here, a scalar's bytes by the caller.
    func extraText(depth: Int, budget: inout ExpansionBudget) -> ExtraText {
        switch self {
        case .string(let text): return .text(text)
        case .damagedData(let why): return .damaged(why)
        case .array, .dictionary:
            var containers: Set<UnsafeRawPointer> = []
            do throws(NestedStop) {
                return .text(try nestedText(depth: depth + 1, budget: &budget, containers: &containers))
            } catch {
                switch error {
                case .tooDeep: return .tooDeep
                case .tooLarge: return .tooLarge
                case .damaged(let why): return .damaged(why)
                case .sharedContainer: return .sharedContainer
                }
            }
        default: return .text(scalarText)
        }
    }

    private var scalarText: String {
        switch self {
        case .string(let text): text
        case .data(let data): "hex:" + IOSAttributes.hex(data)
        case .boolean(let flag): flag ? "true" : "false"
        case .integer(let number): String(number)
        case .unsignedInteger(let number): String(number)
        case .real(let number): String(number)
        case .date(let date): IOSAttributes.iso8601(date)
        case .null: "null"
        case .array, .dictionary, .uid, .damagedData: "?"
        }
    }

    /// Why a container's text was given up.
    private enum NestedStop: Error {
        case tooDeep, tooLarge, sharedContainer
        case damaged(String)
    }

    /// Where a non-empty container's elements are stored: the same for every use of one decoded object (a binary
    /// plist's parser decodes each object once and shares it), different for distinct containers alive together.
    private var containerIdentity: UnsafeRawPointer? {
        switch self {
        case .array(let elements) where !elements.isEmpty:
            elements.withUnsafeBufferPointer { $0.baseAddress.map(UnsafeRawPointer.init) }
        case .dictionary(let dictionary) where !dictionary.entries.isEmpty:
            dictionary.entries.withUnsafeBufferPointer { $0.baseAddress.map(UnsafeRawPointer.init) }
        default: nil
        }
    }

    /// - Parameters:
    ///   - depth: the depth this value sits at when it is a container.
    ///   - budget: what may still be written; overspent when the text was given up as too large.
    ///   - containers: the containers met so far in this value: one met again is refused, so that a chain of
    ///     shared containers can't expand a few hundred bytes into millions of values.
    private func nestedText(
        depth: Int, budget: inout ExpansionBudget, containers: inout Set<UnsafeRawPointer>
    ) throws(NestedStop) -> String {
        if let identity = containerIdentity, !containers.insert(identity).inserted { throw .sharedContainer }
        budget.values -= 1
        // Quotes, or the room of a number or a date; a string's or data's bytes before it is copied.
        budget.bytes -= 32 + expandedByteCount(asHex: true)
        guard !budget.isOverspent else { throw .tooLarge }
        switch self {
        case .string(let text):
            return Self.quoted(text)
        case .damagedData(let why):
            throw .damaged(why)
        case .array(let elements):
            guard depth <= DumpLimits.maxDepth else { throw .tooDeep }
            var parts: [String] = []
            parts.reserveCapacity(elements.count)
            for element in elements {
                parts.append(try element.nestedText(depth: depth + 1, budget: &budget, containers: &containers))
            }
            return "[" + parts.joined(separator: ", ") + "]"
        case .dictionary(let dictionary):
            guard depth <= DumpLimits.maxDepth else { throw .tooDeep }
            let entries = dictionary.uniqueEntries()
            var parts: [(String, String)] = []
            parts.reserveCapacity(entries.count)
            for (key, element) in entries {
                let keyText = try key.nestedText(depth: depth + 1, budget: &budget, containers: &containers)
                parts.append(
                    (keyText, try element.nestedText(depth: depth + 1, budget: &budget, containers: &containers)))
            }
            return "{" + parts.sorted { $0.0 < $1.0 }.map { "\($0.0): \($0.1)" }.joined(separator: ", ") + "}"
        case .data, .date:
            return Self.quoted(scalarText)
        default:
            return scalarText
        }
    }

    private static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
