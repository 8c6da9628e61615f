/// Why a string can't be a key or a service: the storage model's rule, which every call checks. Importers ask it
/// before they plan an item, so that an item the package would refuse is blocked with a reason, never failed.
public enum NameProblem: Sendable, Equatable {
    /// The name is empty.
    case empty
    /// The name is longer than ``maxLength`` UTF-16 code units.
    case tooLong
    /// The name holds U+0000.
    case containsNUL

    /// The longest key or service, in UTF-16 code units (the TypeScript API's string length).
    public static let maxLength = 256

    /// The problem of `name`, or nil when the package takes it.
    public init?(of name: String) {
        if name.isEmpty {
            self = .empty
        } else if name.utf16.count > Self.maxLength {
            self = .tooLong
        } else if name.utf8.contains(0) {
            self = .containsNUL
        } else {
            return nil
        }
    }
}
