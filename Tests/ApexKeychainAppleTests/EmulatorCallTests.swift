import ApexKeychain
import ApexKeychainApple
import Foundation
import Testing

/// The emulator's record of calls, and its thread safety.
@Suite("Emulator: calls")
struct EmulatorCallTests {
    @Test("every call is recorded by kind with its dictionaries and status")
    func record() {
        let (_, keychain) = makeEmulator()
        let add = genericPassword()
        let read = search([.returnData: .bool(true)])
        let change: SecItemDictionary = [.label: .string("L")]
        _ = keychain.add(add)
        _ = keychain.add(add)
        _ = keychain.copyMatching(read)
        _ = keychain.update(search(), change)
        _ = keychain.delete(search())
        _ = keychain.delete(search())
        #expect(
            keychain.calls == [
                .init(kind: .add, query: add, status: .success),
                .init(kind: .add, query: add, status: .duplicateItem),
                .init(kind: .copyMatching, query: read, status: .success),
                .init(kind: .update, query: search(), attributesToUpdate: change, status: .success),
                .init(kind: .delete, query: search(), status: .success),
                .init(kind: .delete, query: search(), status: .itemNotFound),
            ])
        #expect(keychain.count(of: .add) == 2 && keychain.count(of: .copyMatching) == 1)
        #expect(keychain.count(of: .update) == 1 && keychain.count(of: .delete) == 2)
        keychain.resetCalls()
        #expect(keychain.calls.isEmpty && keychain.count(of: .add) == 0)
        // Looking at the items is no call.
        _ = keychain.items
        #expect(keychain.calls.isEmpty)
    }

    @Test("calls from many tasks at once are all answered and recorded")
    func concurrentCalls() async {
        let (_, keychain) = makeEmulator()
        await withTaskGroup(of: Void.self) { group in
            for n in 0..<200 {
                group.addTask {
                    _ = keychain.add(genericPassword(account: "user\(n)"))
                    _ = keychain.copyMatching(search([.account: .string("user\(n)"), .returnData: .bool(true)]))
                }
            }
        }
        #expect(keychain.items.count == 200)
        #expect(Set(keychain.items.map(\.persistentRef)).count == 200)
        #expect(keychain.count(of: .add) == 200 && keychain.count(of: .copyMatching) == 200)
        #expect(keychain.calls.allSatisfy { $0.status == .success })
    }
}
