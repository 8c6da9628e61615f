/// "Did you mean": the known name closest to a misspelt one.
enum Suggestion {
    /// The name among `known` at the smallest edit distance from `word`, when that distance is at most a third
    /// of the word's length (at least 1, at most 3); nil when none is that close.
    static func closest(to word: String, among known: [String]) -> String? {
        let limit = min(3, max(1, word.count / 3))
        var best: (name: String, distance: Int)?
        for name in known {
            let distance = editDistance(Array(word), Array(name))
            if distance <= limit, distance < best?.distance ?? .max { best = (name, distance) }
        }
        return best?.name
    }

    /// Levenshtein distance: insertions, deletions and substitutions.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        var previous = Array(0...b.count)
        for (i, ca) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, cb) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (ca == cb ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
