import Foundation

/// The operations measured, in table order.
enum Operation: String, CaseIterable, Sendable {
    case setItem, getItem, getItemInfo, getAllKeys

    var unit: String { self == .getAllKeys ? "µs/key" : "µs/op" }
}

/// One row of the table: µs per op (per key listed for getAllKeys) on each side, medians of the rounds.
struct Measurement: Sendable {
    var size: Int
    var operation: Operation
    var api: Double
    var floor: Double
    var apiRounds: [Double]
    var floorRounds: [Double]

    var ratio: Double { api / floor }
}

/// Side facts that help read the table.
struct Diagnostics: Sendable {
    var size: Int
    /// The floor's set with `PRAGMA synchronous = NORMAL` (no fsync per commit), µs/op.
    var floorSetNoFsync: Double
    /// The sort getAllKeys must do (by UTF-16 code units, `utf16.lexicographicallyPrecedes`) of the floor's
    /// keys in the order its SELECT returns them (index order, so already sorted), µs/key.
    var sortPerKey: Double
    /// The same keys shuffled first (what a sort after a `Set` faces), µs/key.
    var shuffledSortPerKey: Double
    /// The store's getAllKeys SELECT (all attribute columns) through the raw C API, no Swift objects, µs/key.
    var selectAllColumnsPerKey: Double
    var populateAPISeconds: Double
    var populateFloorSeconds: Double
    /// Whether a `wal_checkpoint(TRUNCATE)` from another connection, after population, could truncate the WAL
    /// (false: a reader on the store's connection held it).
    var apiTruncated: Bool
    var floorTruncated: Bool
    /// `-wal` file sizes in bytes after this size's measurements.
    var apiWAL: Int
    var floorWAL: Int
}

/// Runs every size, both sides, and collects the results.
struct Runner {
    let config: Config
    let api: APISide
    let floor: FloorSide
    var rng: SplitMix64
    let values: [String]
    let valueBytes: [[UInt8]]

    init(config: Config, directory: URL) throws {
        self.config = config
        rng = SplitMix64(seed: config.seed)
        values = makeValues(count: 16, size: config.valueSize, rng: &rng)
        valueBytes = values.map { Array($0.utf8) }
        api = try APISide(directory: directory)
        floor = try FloorSide(directory: directory, valueSize: config.valueSize)
    }

    mutating func run() async throws -> (rows: [Measurement], diagnostics: [Diagnostics]) {
        var rows: [Measurement] = []
        var diagnostics: [Diagnostics] = []
        for size in config.sizes {
            progress("populating to \(size) items")
            var start = Clock.nanoseconds()
            try await api.populate(to: size, values: values)
            let apiSeconds = Clock.seconds(since: start)
            start = Clock.nanoseconds()
            try floor.populate(to: size, values: valueBytes)
            let floorSeconds = Clock.seconds(since: start)
            // Start both sides from a truncated WAL (each from a connection of its own, so the API store is not
            // touched through the code measured).
            let apiTruncated = try FloorSide.checkpoint(fileAt: api.storeURL.path)
            let floorTruncated = try FloorSide.checkpoint(fileAt: floor.path)
            progress(
                "populated: API \(format(apiSeconds, decimals: 2)) s, floor \(format(floorSeconds, decimals: 2)) s")

            // The same random existing keys for both sides, drawn before any timing.
            let indices = (0..<config.operations).map { _ in Int(rng.next() % UInt64(size)) }
            let keys = indices.map(Names.key)
            let keyBytes = keys.map { Array($0.utf8) }
            let warmup = min(100, keys.count)
            _ = try await api.set(keys[0..<warmup], values: values)
            _ = try floor.set(keyBytes[0..<warmup], values: valueBytes)
            _ = try await api.get(keys[0..<warmup])
            _ = try floor.get(keyBytes[0..<warmup])
            _ = try await api.info(keys[0..<warmup])
            _ = try floor.info(keyBytes[0..<warmup])

            for operation in config.only {
                progress("size \(size): \(operation.rawValue)")
                rows.append(try await measure(operation, size: size, keys: keys, keyBytes: keyBytes))
            }

            // Diagnostics: the fsync share of a set; getAllKeys' sort, and the store's all-columns SELECT alone.
            try floor.setSynchronous("NORMAL")
            let sample = keyBytes.prefix(max(1, config.operations / 2))
            let noFsync = Double(try floor.set(sample, values: valueBytes)) / 1e3 / Double(sample.count)
            try floor.setSynchronous("FULL")
            if !config.only.contains(.getAllKeys) { _ = try floor.listAll() }
            let listed = floor.lastListed
            func sortTime(_ keys: [String]) -> Double {
                let start = Clock.nanoseconds()
                let sorted = keys.sorted { $0.utf16.lexicographicallyPrecedes($1.utf16) }
                let elapsed = Clock.nanoseconds() - start
                return sorted.count == keys.count ? Double(elapsed) / 1e3 / Double(max(1, keys.count)) : .nan
            }
            let sortPerKey = sortTime(listed)
            let shuffledSortPerKey = sortTime(listed.shuffled(using: &rng))
            var selectRuns: [Double] = []
            for _ in 0..<3 {
                let (nanoseconds, rows) = try floor.selectAllAttributes()
                guard rows == size else { throw BenchError("the all-columns SELECT returned \(rows) rows") }
                selectRuns.append(Double(nanoseconds) / 1e3 / Double(rows))
            }
            diagnostics.append(
                Diagnostics(
                    size: size, floorSetNoFsync: noFsync, sortPerKey: sortPerKey,
                    shuffledSortPerKey: shuffledSortPerKey,
                    selectAllColumnsPerKey: median(selectRuns), populateAPISeconds: apiSeconds,
                    populateFloorSeconds: floorSeconds, apiTruncated: apiTruncated, floorTruncated: floorTruncated,
                    apiWAL: FloorSide.fileSize(api.storeURL.path + "-wal"),
                    floorWAL: FloorSide.fileSize(floor.path + "-wal")))
        }
        return (rows, diagnostics)
    }

    /// Times one operation in `config.rounds` rounds, alternating which side goes first; µs per op (per key
    /// listed for getAllKeys) of the median round on each side.
    private func measure(
        _ operation: Operation, size: Int, keys: [String], keyBytes: [[UInt8]]
    ) async throws -> Measurement {
        var apiRounds: [Double] = []
        var floorRounds: [Double] = []
        let rounds = operation == .getAllKeys ? config.listRuns : config.rounds
        for round in 0..<rounds {
            let lower = keys.count * round / rounds
            let upper = keys.count * (round + 1) / rounds
            let apiFirst = round % 2 == 0
            for side in apiFirst ? [true, false] : [false, true] {
                let (nanoseconds, count) = try await time(
                    operation, api: side, keys: keys[lower..<upper], keyBytes: keyBytes[lower..<upper])
                let perOp = Double(nanoseconds) / 1e3 / Double(max(1, count))
                if side { apiRounds.append(perOp) } else { floorRounds.append(perOp) }
            }
        }
        return Measurement(
            size: size, operation: operation, api: median(apiRounds), floor: median(floorRounds), apiRounds: apiRounds,
            floorRounds: floorRounds)
    }

    /// One timed batch: nanoseconds, and how many ops (keys listed, for getAllKeys) they covered.
    private func time(
        _ operation: Operation, api side: Bool, keys: ArraySlice<String>, keyBytes: ArraySlice<[UInt8]>
    ) async throws -> (UInt64, Int) {
        switch (operation, side) {
        case (.setItem, true): (try await api.set(keys, values: values), keys.count)
        case (.setItem, false): (try floor.set(keyBytes, values: valueBytes), keys.count)
        case (.getItem, true): (try await api.get(keys), keys.count)
        case (.getItem, false): (try floor.get(keyBytes), keys.count)
        case (.getItemInfo, true): (try await api.info(keys), keys.count)
        case (.getItemInfo, false): (try floor.info(keyBytes), keys.count)
        case (.getAllKeys, true): try await api.listAll()
        case (.getAllKeys, false): try floor.listAll()
        }
    }
}
