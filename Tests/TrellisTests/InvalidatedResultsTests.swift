import Foundation
import Testing
@testable import Trellis

/// Results belong to the read transaction they were made in (realm-core's `Results::is_valid`:
/// its table accessor dies with the transaction). `realm.invalidate()` ends it: reading results
/// made before then traps with realm-core's "Access to invalidated Results objects" (Realm's
/// RealmTests.testInvalidateInvalidatesResults, ResultsTests.testAllMethodsCheckForInvalidation),
/// while `isInvalidated` answers. Nothing else invalidates them: not a delete, a refresh, a
/// commit, nor freezing; and the reads notifications make for themselves never trap.
@Suite struct InvalidatedResultsTests {
    let folder = TemporaryFolder()

    /// A Realm (in the exit tests' own file) with two owners, "a" linking to the pet "rex".
    static func invalidatedRealm() -> (Realm, Owner, Pet) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-exit-\(UUID()).realm")
        do {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [Owner.self, Pet.self]))
            let owner = Owner("a", age: 3), pet = Pet("rex")
            try realm.write {
                realm.add([owner, Owner("b", age: 5)])
                owner.dogs.append(pet)
                owner.tags.append(objectsIn: ["x", "y"])
            }
            return (realm, owner, pet)
        } catch {
            fatalError("could not open \(url): \(error)")
        }
    }

    static let message = "Access to invalidated Results objects"

    @Test func countingResultsOfAnInvalidatedRealmTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _, _) = InvalidatedResultsTests.invalidatedRealm()
            let results = realm.objects(Owner.self).filter("age > 1")
            #expect(results.count == 2)
            realm.invalidate()
            #expect(results.isInvalidated)
            _ = results.count
        }
        #expect(exitTestStandardError(result).contains(Self.message))
    }

    @Test func readingAnObjectOfInvalidatedResultsTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _, _) = InvalidatedResultsTests.invalidatedRealm()
            let results = realm.objects(Owner.self)
            realm.invalidate()
            _ = results.first
        }
        #expect(exitTestStandardError(result).contains(Self.message))
    }

    @Test func iteratingInvalidatedResultsTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _, _) = InvalidatedResultsTests.invalidatedRealm()
            let results = realm.objects(Owner.self).sorted(byKeyPath: "age")
            realm.invalidate()
            for owner in results { _ = owner }
        }
        #expect(exitTestStandardError(result).contains(Self.message))
    }

    @Test func filteringInvalidatedResultsTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _, _) = InvalidatedResultsTests.invalidatedRealm()
            let results = realm.objects(Owner.self)
            realm.invalidate()
            _ = results.filter("age > 1")
        }
        #expect(exitTestStandardError(result).contains(Self.message))
    }

    @Test func anAggregateOfInvalidatedResultsTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _, _) = InvalidatedResultsTests.invalidatedRealm()
            let results = realm.objects(Owner.self)
            realm.invalidate()
            let oldest: Int? = results.max(ofProperty: "age")
            _ = oldest
        }
        #expect(exitTestStandardError(result).contains(Self.message))
    }

    @Test func resultsOfValuesOfAnInvalidatedRealmTrap() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, owner, _) = InvalidatedResultsTests.invalidatedRealm()
            let tags = owner.tags.filter("self != 'x'")
            #expect(tags.count == 1)
            realm.invalidate()
            _ = tags.count
        }
        #expect(exitTestStandardError(result).contains(Self.message))
    }

    /// Realm's LinkingObjects is a results collection (RLMLinkingObjects is an RLMResults).
    @Test func linkingObjectsOfAnInvalidatedRealmTrap() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _, pet) = InvalidatedResultsTests.invalidatedRealm()
            let owners = pet.listOwners
            #expect(owners.count == 1)
            realm.invalidate()
            _ = owners.count
        }
        #expect(exitTestStandardError(result).contains(Self.message))
    }

    // MARK: - What does not invalidate results

    private func populated() throws -> Realm {
        let realm = try Realm(configuration: folder.configuration([Owner.self, Pet.self]))
        try realm.write { realm.add([Owner("a", age: 3), Owner("b", age: 5)]) }
        return realm
    }

    /// Realm's testCanRestartReadTransactionAfterInvalidate: results made after `invalidate()`
    /// read the new read transaction, and `isInvalidated` never traps.
    @Test func resultsMadeAfterInvalidateRead() throws {
        let realm = try populated()
        let before = realm.objects(Owner.self)
        realm.invalidate()
        #expect(before.isInvalidated)
        let after = realm.objects(Owner.self)
        #expect(!after.isInvalidated)
        #expect(after.count == 2)
        #expect(after.filter("age > 4").first?.name == "b")
    }

    /// Deleting, committing, refreshing and freezing leave results valid.
    @Test func deletesCommitsRefreshesAndFreezingKeepResultsValid() throws {
        let realm = try populated()
        let results = realm.objects(Owner.self).sorted(byKeyPath: "age")
        let frozen = results.freeze()
        try realm.write { realm.delete(results[0]) }
        realm.refresh()
        #expect(!results.isInvalidated)
        #expect(results.map(\.name) == ["b"])
        // The frozen copy belongs to its own (frozen) Realm, which the live one's invalidate()
        // does not touch.
        realm.invalidate()
        #expect(!frozen.isInvalidated)
        #expect(frozen.map(\.name) == ["a", "b"])
        #expect(frozen.count == 2)
    }

    /// An observer of results made before `invalidate()` still hears of later commits (its
    /// own reads never trap), as Realm's notifier keeps running.
    @Test func observersOfResultsKeepDeliveringAfterInvalidate() throws {
        let realm = try populated()
        let results = realm.objects(Owner.self)
        let log = LockedBox<[String]>([])
        let token = results.observe { change in
            switch change {
            case .initial: log.mutate { $0.append("initial") }
            case .update(_, let deletions, let insertions, _): log.mutate { $0.append("update \(deletions) \(insertions)") }
            case .error: log.mutate { $0.append("error") }
            }
        }
        realm.refresh()
        realm.invalidate()
        try realm.write { realm.add(Owner("c")) }
        #expect(log.get() == ["initial", "update [] [2]"])
        token.invalidate()
    }
}
