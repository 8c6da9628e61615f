#if canImport(Security) && canImport(LocalAuthentication)
    import ApexKeychain
    import Foundation
    import LocalAuthentication
    import Security

    /// The four ``SecItemCalls`` with the Security framework's `SecItemAdd`, `SecItemCopyMatching`,
    /// `SecItemUpdate` and `SecItemDelete`: type conversion only, every decision is the caller's.
    ///
    /// Keys are passed as `CFString`s of the framework's strings (which is what its constants are, `apple-secitem.md`
    /// §1); values as `CFString`, `CFData`, `CFNumber`, `CFBoolean`, `CFDate`, a `SecAccessControl` made with
    /// `SecAccessControlCreateWithFlags`, or an `LAContext`. Results come back typed, without `accc`: the framework
    /// synthesizes one for every item and has no public reader of its constraints (§2.4).
    public struct SecItemFramework: SecItemCalls {
        /// The Security framework's calls.
        public init() {}

        /// `SecItemAdd(attributes, NULL)`.
        public func add(_ attributes: SecItemDictionary) -> SecItemStatus {
            guard let attributes = Self.dictionary(attributes) else { return .param }
            return SecItemStatus(rawValue: SecItemAdd(attributes, nil))
        }

        /// `SecItemCopyMatching(query, &result)`.
        public func copyMatching(_ query: SecItemDictionary) -> (status: SecItemStatus, result: SecItemResult) {
            guard let query = Self.dictionary(query) else { return (.param, .none) }
            var result: CFTypeRef?
            let status = SecItemCopyMatching(query, &result)
            return (SecItemStatus(rawValue: status), status == errSecSuccess ? Self.result(result) : .none)
        }

        /// `SecItemUpdate(query, attributesToUpdate)`.
        public func update(_ query: SecItemDictionary, _ attributesToUpdate: SecItemDictionary) -> SecItemStatus {
            guard let query = Self.dictionary(query), let attributes = Self.dictionary(attributesToUpdate) else {
                return .param
            }
            return SecItemStatus(rawValue: SecItemUpdate(query, attributes))
        }

        /// `SecItemDelete(query)`.
        public func delete(_ query: SecItemDictionary) -> SecItemStatus {
            guard let query = Self.dictionary(query) else { return .param }
            return SecItemStatus(rawValue: SecItemDelete(query))
        }

        /// The `CFDictionary` of a typed dictionary; nil when an access control can't be made (errSecParam, as the
        /// framework answers an invalid one, §2.11).
        static func dictionary(_ items: SecItemDictionary) -> CFDictionary? {
            var out: [String: AnyObject] = [:]
            for (key, value) in items {
                guard let object = object(value) else { return nil }
                out[key.rawValue] = object
            }
            return out as CFDictionary
        }

        static func object(_ value: SecItemValue) -> AnyObject? {
            switch value {
            case .string(let text): return text as NSString
            case .data(let data): return data as NSData
            case .number(let number): return NSNumber(value: number)
            case .bool(let flag): return flag ? kCFBooleanTrue : kCFBooleanFalse
            case .date(let date): return date as NSDate
            case .accessControl(let spec): return secAccessControl(spec)
            case .authenticationContext(.nonInteractive): return nonInteractiveContext()
            case .authenticationContext(.evaluated(let context)):
                // The context a LocalAuthenticationDevice's prompt evaluated; any other can't come from a phone's
                // device, and goes as one that can't prompt.
                let box = (context as? LocalAuthenticationDevice.Evaluation)?.context as? LAContextBox
                return box?.context ?? nonInteractiveContext()
            }
        }

        static func nonInteractiveContext() -> LAContext {
            let context = LAContext()
            context.interactionNotAllowed = true
            return context
        }

        /// `SecAccessControlCreateWithFlags(NULL, protection, flags, &error)`.
        static func secAccessControl(_ spec: SecAccessControlSpec) -> SecAccessControl? {
            var error: Unmanaged<CFError>?
            let flags = SecAccessControlCreateFlags(rawValue: CFOptionFlags(spec.flags.rawValue))
            let made = SecAccessControlCreateWithFlags(nil, spec.protection as CFString, flags, &error)
            error?.release()
            return made
        }

        static func result(_ object: CFTypeRef?) -> SecItemResult {
            guard let object else { return .none }
            switch CFGetTypeID(object) {
            case CFDataGetTypeID(): return .data(object as! Data)
            case CFArrayGetTypeID(): return .list((object as! [AnyObject]).map { result($0) })
            case CFDictionaryGetTypeID():
                var attributes: SecItemDictionary = [:]
                for (key, value) in object as! [String: AnyObject] where key != SecItemKey.accessControl.rawValue {
                    if let value = Self.value(value) { attributes[SecItemKey(rawValue: key)] = value }
                }
                return .attributes(attributes)
            default: return .none
            }
        }

        /// A returned attribute, typed; nil for objects the dictionaries don't carry (a `SecAccessControl`).
        static func value(_ object: AnyObject) -> SecItemValue? {
            switch CFGetTypeID(object) {
            case CFStringGetTypeID(): return .string(object as! String)
            case CFDataGetTypeID(): return .data(object as! Data)
            case CFDateGetTypeID(): return .date(object as! Date)
            case CFBooleanGetTypeID(): return .bool((object as! NSNumber).boolValue)
            case CFNumberGetTypeID(): return .number((object as! NSNumber).int64Value)
            default: return nil
            }
        }
    }
#endif
