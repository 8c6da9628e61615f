import ApexKeychainApple
import Testing

/// The framework's strings, as `OSX/sec/Security/SecItemConstants.c` defines them (`apple-secitem.md` §1).
@Suite("SecItem constants")
struct SecItemKeyTests {
    @Test("every key is the framework's string")
    func keys() {
        let expected: [(SecItemKey, String)] = [
            (.itemClass, "class"), (.accessible, "pdmn"), (.accessControl, "accc"), (.accessGroup, "agrp"),
            (.synchronizable, "sync"), (.creationDate, "cdat"), (.modificationDate, "mdat"), (.creator, "crtr"),
            (.label, "labl"), (.account, "acct"), (.service, "svce"), (.generic, "gena"), (.itemDescription, "desc"),
            (.comment, "icmt"), (.type, "type"), (.securityDomain, "sdmn"), (.server, "srvr"), (.protocol, "ptcl"),
            (.authenticationType, "atyp"), (.port, "port"), (.path, "path"), (.matchLimit, "m_Limit"),
            (.returnData, "r_Data"), (.returnAttributes, "r_Attributes"), (.returnPersistentRef, "r_PersistentRef"),
            (.returnRef, "r_Ref"), (.valueData, "v_Data"), (.valuePersistentRef, "v_PersistentRef"),
            (.authenticationUI, "u_AuthUI"), (.authenticationContext, "u_AuthCtx"), (.operationPrompt, "u_OpPrompt"),
            (.useDataProtectionKeychain, "nleg"),
        ]
        for (key, raw) in expected { #expect(key.rawValue == raw) }
        #expect(Set(expected.map(\.0)).count == expected.count)
    }

    @Test("every value constant and status number is the framework's")
    func constants() {
        #expect(SecItemConstant.genericPassword == "genp" && SecItemConstant.internetPassword == "inet")
        #expect(SecItemConstant.synchronizableAny == "syna")
        #expect(SecItemConstant.matchLimitOne == "m_LimitOne" && SecItemConstant.matchLimitAll == "m_LimitAll")
        #expect(SecItemConstant.authenticationUISkip == "u_AuthUIS")
        #expect(SecItemConstant.authenticationUIFail == "u_AuthUIF")
        let statuses: [(SecItemStatus, Int32)] = [
            (.success, 0), (.param, -50), (.userCanceled, -128), (.notAvailable, -25291), (.authFailed, -25293),
            (.duplicateItem, -25299), (.itemNotFound, -25300), (.noSuchAttr, -25303), (.noSuchClass, -25306),
            (.interactionNotAllowed, -25308), (.decode, -26275), (.missingEntitlement, -34018),
        ]
        for (status, number) in statuses { #expect(status.rawValue == number) }
    }
}
