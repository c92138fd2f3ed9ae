import Foundation
import Testing
@testable import Trellis

/// `invalidate()` on a frozen Realm closes it, as RLMRealm.invalidate does (`_realm->close()`
/// when frozen): asking it for objects traps with realm-swift's "Cannot read from a frozen Realm
/// which has been invalidated." (RealmTests.mm testReadAfterInvalidateFrozen), its objects are
/// invalidated (on every thread), its results and collections trap with realm-core's messages.
/// The live Realm it was frozen from is untouched, and freezing again gives a readable Realm.
@Suite struct FrozenRealmInvalidateTests {
    let folder = TemporaryFolder()

    static func frozenRealm() -> (live: Realm, frozen: Realm) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-exit-\(UUID()).realm")
        do {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [Owner.self, Pet.self]))
            let owner = Owner("a")
            owner.tags.append("x")
            try realm.write { realm.add([owner, Owner("b")]) }
            return (realm, realm.freeze())
        } catch {
            fatalError("could not open \(url): \(error)")
        }
    }

    static let message = "Cannot read from a frozen Realm which has been invalidated."

    @Test func askingAnInvalidatedFrozenRealmForObjectsTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, frozen) = FrozenRealmInvalidateTests.frozenRealm()
            frozen.invalidate()
            _ = frozen.objects(Owner.self)
        }
        #expect(exitTestStandardError(result).contains(Self.message))
    }

    @Test func lookingUpAnObjectOfAnInvalidatedFrozenRealmTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, frozen) = FrozenRealmInvalidateTests.frozenRealm()
            frozen.invalidate()
            _ = frozen.dynamicObjects("Owner")
        }
        #expect(exitTestStandardError(result).contains(Self.message))
    }

    @Test func readingAFrozenObjectAfterItsRealmWasInvalidatedTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, frozen) = FrozenRealmInvalidateTests.frozenRealm()
            guard let owner = frozen.objects(Owner.self).first else { fatalError("no owner") }
            _ = owner.name
            frozen.invalidate()
            _ = owner.name
        }
        #expect(exitTestStandardError(result).contains("Object has been deleted or invalidated."))
    }

    @Test func readingAFrozenObjectOnAnotherThreadAfterInvalidateTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, frozen) = FrozenRealmInvalidateTests.frozenRealm()
            guard let first = frozen.objects(Owner.self).first else { fatalError("no owner") }
            nonisolated(unsafe) let owner = first
            _ = owner.name
            frozen.invalidate()
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                _ = owner.name
                done.signal()
            }
            done.wait()
        }
        #expect(exitTestStandardError(result).contains("Object has been deleted or invalidated."))
    }

    @Test func countingResultsOfAnInvalidatedFrozenRealmTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, frozen) = FrozenRealmInvalidateTests.frozenRealm()
            let owners = frozen.objects(Owner.self)
            #expect(owners.count == 2)
            frozen.invalidate()
            _ = owners.count
        }
        #expect(exitTestStandardError(result).contains("Access to invalidated Results objects"))
    }

    @Test func readingAFrozenListAfterItsRealmWasInvalidatedTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, frozen) = FrozenRealmInvalidateTests.frozenRealm()
            guard let tags = frozen.objects(Owner.self).first?.tags else { fatalError("no owner") }
            frozen.invalidate()
            _ = tags.count
        }
        #expect(exitTestStandardError(result).contains(invalidatedCollectionMessage("List")))
    }

    @Test func anInvalidatedFrozenRealmsObjectsAreInvalidatedAndTheLiveRealmReadsOn() throws {
        let realm = try Realm(configuration: folder.configuration([Owner.self, Pet.self]))
        try realm.write { realm.add([Owner("a"), Owner("b")]) }
        let frozen = realm.freeze()
        let owner = try #require(frozen.objects(Owner.self).first)
        let frozenOwners = frozen.objects(Owner.self)
        #expect(!owner.isInvalidated)
        frozen.invalidate()
        #expect(owner.isInvalidated)
        #expect(frozenOwners.isInvalidated)
        #expect(frozen.isFrozen)
        #expect(realm.objects(Owner.self).count == 2)
        // Freezing the same version again gives a Realm that reads.
        let again = realm.freeze()
        #expect(again.objects(Owner.self).count == 2)
        #expect(again.objects(Owner.self).first?.name == "a")
        // As in Realm, its schema still answers (RLMRealm keeps it; no read of the file).
        #expect(frozen.schema["Owner"] != nil)
    }

    /// RLMRealm.invalidate calls realm-core's `Realm::invalidate()`, whose `verify_open()` refuses
    /// a closed Realm: invalidating a closed frozen Realm again traps. Before, it did nothing.
    @Test func invalidatingAClosedFrozenRealmAgainTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, frozen) = FrozenRealmInvalidateTests.frozenRealm()
            frozen.invalidate()
            frozen.invalidate()
        }
        #expect(exitTestStandardError(result).contains("Cannot access realm that has been closed."))
    }

    /// RLMRealm.isEmpty reads realm-core's group (`read_group()` → `verify_open()`): a closed
    /// frozen Realm traps. Before, Trellis answered from the snapshot it keeps.
    @Test func isEmptyOfAClosedFrozenRealmTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, frozen) = FrozenRealmInvalidateTests.frozenRealm()
            frozen.invalidate()
            _ = frozen.isEmpty
        }
        #expect(exitTestStandardError(result).contains("Cannot access realm that has been closed."))
    }
}
