import ApexKeychain
import ApexMigration

/// Why an item can't be mapped. The reason names attributes and rules, never a value.
struct Blocked: Error {
    let reason: String
    /// Whether what is missing is input the run was not given (a bundle id): the item is
    /// `SourceVerdict.needsInput(_:)`, pending until a run is given it, not blocked for good.
    let needsInput: Bool
    init(_ reason: String) {
        self.reason = reason
        needsInput = false
    }
    private init(reason: String, needsInput: Bool) {
        self.reason = reason
        self.needsInput = needsInput
    }
    /// An item that a run with `reason`'s input can migrate.
    static func needsInput(_ reason: String) -> Blocked { Blocked(reason: reason, needsInput: true) }
}

/// The user's service choices and the package's naming rules, shared by both platforms.
struct ServiceRules {
    let options: ImportOptions

    /// Why the user's include / exclude lists leave out the source service `asFound`, or nil when it is kept.
    func filterReason(_ asFound: String, what: String = "service") -> String? {
        if options.excludeServices.contains(asFound) {
            return "filtered by the user: \(what) \(quoted(asFound)) is excluded"
        }
        if let included = options.includeServices, !included.contains(asFound) {
            return "filtered by the user: \(what) \(quoted(asFound)) is not among the included services"
        }
        return nil
    }

    /// The target service of the source service `asFound`: the user's mapping, else the same name.
    func mapped(_ asFound: String) -> String { options.serviceMap[asFound] ?? asFound }

    /// A note when the user's map renamed `asFound`.
    func mapNote(_ asFound: String) -> String? {
        guard let target = options.serviceMap[asFound], !ExactText.equal(target, asFound) else { return nil }
        return "service \(quoted(asFound)) is written to \(quoted(target)), as the service map says"
    }

    /// Checks a target service or key against the package's rules: not empty, at most 256 UTF-16 code units,
    /// no U+0000.
    static func checkName(_ name: String, _ what: String) throws(Blocked) {
        switch NameProblem(of: name) {
        case nil: return
        case .empty: throw Blocked("the target \(what) would be empty; map the service with --service-map")
        case .tooLong:
            throw Blocked(
                "the target \(what) would be longer than \(NameProblem.maxLength) characters; map the service with --service-map"
            )
        case .containsNUL:
            throw Blocked("the target \(what) would contain U+0000; map the service with --service-map")
        }
    }
}

/// A name for a note: in quotes, control characters escaped, at most 120 characters.
func quoted(_ name: String) -> String { NoteText.quoted(name) }
