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

    /// The allowed value that `word`, refused, most likely meant, ignoring case: the ``closest(to:among:)``
    /// one (a typo), else the one that `word` shortens (`expo` for `expo-secure-store`, `keychain` for
    /// `react-native-keychain`, `afterFirst` for `afterFirstUnlock`).
    ///
    /// A value shortened by `word` (two characters at least) starts with it, or has it after one of its `-`. Of
    /// several, the shortest is taken when it starts each of the others (`afterFirstUnlock`, not
    /// `afterFirstUnlockThisDeviceOnly`); otherwise `word` is ambiguous and nil is returned.
    static func value(for word: String, among allowed: [String]) -> String? {
        let typed = word.lowercased()
        let lowered = allowed.map { $0.lowercased() }
        if let near = closest(to: typed, among: lowered), let index = lowered.firstIndex(of: near) {
            return allowed[index]
        }
        guard typed.count >= 2 else { return nil }
        let shortened = allowed.indices.filter { lowered[$0].hasPrefix(typed) || lowered[$0].contains("-" + typed) }
        guard let shortest = shortened.min(by: { allowed[$0].count < allowed[$1].count }),
            shortened.allSatisfy({ lowered[$0].hasPrefix(lowered[shortest]) })
        else { return nil }
        return allowed[shortest]
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
