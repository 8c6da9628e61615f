/// Decoding helpers that turn unknown option names and values into `INVALID_ARGUMENT`, as the TypeScript
/// API does, instead of silently dropping them.

/// A coding key that accepts any string, so that unknown names can be found and reported.
struct AnyCodingKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
    init(_ name: String) { stringValue = name }
}

struct StrictContainer {
    let container: KeyedDecodingContainer<AnyCodingKey>
    let type: String

    /// Opens `decoder` as an object and refuses any key not in `allowed`.
    init(_ decoder: any Decoder, type: String, allowed: Set<String>) throws {
        self.type = type
        do {
            container = try decoder.container(keyedBy: AnyCodingKey.self)
        } catch {
            throw KeychainError.invalid("\(type) must be an object")
        }
        for key in container.allKeys where !allowed.contains(key.stringValue) {
            throw KeychainError.invalid("unknown option '\(key.stringValue)' in \(type)")
        }
    }

    func string(_ name: String) throws -> String? {
        try value(name, as: String.self, expected: "a string")
    }

    func bool(_ name: String) throws -> Bool? {
        try value(name, as: Bool.self, expected: "a boolean")
    }

    func int(_ name: String) throws -> Int? {
        try value(name, as: Int.self, expected: "an integer")
    }

    /// A string-valued enum: an unknown value names the option and the accepted values.
    func enumeration<E: RawRepresentable & CaseIterable>(_ name: String, _: E.Type) throws -> E?
    where E.RawValue == String {
        guard let raw = try string(name) else { return nil }
        guard let parsed = E(rawValue: raw) else {
            let accepted = E.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
            throw KeychainError.invalid("unknown value for \(type).\(name); expected one of \(accepted)")
        }
        return parsed
    }

    func nested<T: Decodable>(_ name: String, _: T.Type) throws -> T? {
        let key = AnyCodingKey(name)
        guard container.contains(key), try !container.decodeNil(forKey: key) else { return nil }
        do {
            return try container.decode(T.self, forKey: key)
        } catch let error as KeychainError {
            throw error
        } catch {
            throw KeychainError.invalid("\(type).\(name) must be an object")
        }
    }

    private func value<T: Decodable>(_ name: String, as: T.Type, expected: String) throws -> T? {
        let key = AnyCodingKey(name)
        guard container.contains(key), try !container.decodeNil(forKey: key) else { return nil }
        do {
            return try container.decode(T.self, forKey: key)
        } catch  where T.self != String.self || error is DecodingError {
            throw KeychainError.invalid("\(type).\(name) must be \(expected)")
        } catch {
            // A string the JSON parser can't turn into text when it is read: one with a lone surrogate.
            throw KeychainError.invalid(
                "\(type).\(name) is not valid text: it holds a lone surrogate (half of a UTF-16 pair), which has no UTF-8 form"
            )
        }
    }
}
