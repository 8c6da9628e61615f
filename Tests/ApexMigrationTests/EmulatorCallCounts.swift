import ApexKeychainApple

extension SecItemEmulator {
    /// The calls so far that list (`m_LimitAll`), by class.
    func listings(of itemClass: String) -> Int {
        calls.count {
            $0.kind == .copyMatching && $0.query[.matchLimit] == .string(SecItemConstant.matchLimitAll)
                && $0.query[.itemClass] == .string(itemClass)
        }
    }

    /// The calls so far as `kind=n` sorted by kind (for a test's message).
    var callSummary: String {
        Call.Kind.allCases.map { kind in "\(kind.rawValue)=\(calls.count { $0.kind == kind })" }
            .joined(separator: " ")
    }
}

extension SecItemEmulator {
    /// The listings so far of other libraries' items (no creator mark in the query), by class.
    func sourceListings(of itemClass: String) -> Int {
        calls.count {
            $0.kind == .copyMatching && $0.query[.matchLimit] == .string(SecItemConstant.matchLimitAll)
                && $0.query[.itemClass] == .string(itemClass) && $0.query[.creator] == nil
        }
    }
}
