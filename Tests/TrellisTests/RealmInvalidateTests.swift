import Foundation
import Testing
import Trellis

final class InvalidatedItem: Object {
    @Persisted var value = 0
    @Persisted var tags: List<String>
    @Persisted var children: List<InvalidatedItem>
    @Persisted(originProperty: "children") var parents: LinkingObjects<InvalidatedItem>
}

/// `Realm.invalidate()` as Realm answers it (RealmTests.testInvalidate, RealmCollectionTypeTests
/// .testInvalidate, and RLMRealm's testInvalidate* in Realm/Tests/RealmTests.mm): it ends the
/// read transaction (and rolls back a write); everything read before it is invalidated, objects,
/// results, lists and linking objects alike; the next read begins a new read transaction.
@Suite struct RealmInvalidateTests {
    let folder = TemporaryFolder()

    private func open() throws -> Realm {
        try Realm(configuration: folder.configuration([InvalidatedItem.self]))
    }

    /// Realm's RealmTests.testInvalidate.
    @Test func objectsReadBeforeInvalidateStayInvalidatedAfterTheNextWrite() throws {
        let realm = try open()
        let item = InvalidatedItem()
        try realm.write { realm.add(item) }
        realm.invalidate()
        #expect(item.isInvalidated)
        try realm.write { realm.add(InvalidatedItem()) }
        #expect(realm.objects(InvalidatedItem.self).count == 2)
        #expect(item.isInvalidated)
    }

    /// RealmCollectionTypeTests.testInvalidate (`collection.realm == nil || collection.isInvalidated`
    /// for results, lists and linking objects), RLMRealm's testInvalidateInvalidatesResults and
    /// testInvalidateInvalidatesArrays.
    @Test func collectionsReadBeforeInvalidateAreInvalidated() throws {
        let realm = try open()
        let parent = try realm.write {
            realm.create(InvalidatedItem.self, value: ["value": 1, "tags": ["a"], "children": [["value": 2]]])
        }
        let all = realm.objects(InvalidatedItem.self)
        let filtered = all.filter("value = 1")
        let tags = parent.tags
        let children = parent.children
        let child = try #require(children.first)
        let parents = child.parents
        let counts: [Int] = [all.count, filtered.count, tags.count, children.count, parents.count]
        #expect(counts == [2, 1, 1, 1, 1])
        let before: [Bool] = [all.isInvalidated, filtered.isInvalidated, tags.isInvalidated,
                              children.isInvalidated, parents.isInvalidated]
        #expect(before == [false, false, false, false, false])

        realm.invalidate()

        let after: [Bool] = [all.isInvalidated, filtered.isInvalidated, tags.isInvalidated, children.isInvalidated,
                             parents.isInvalidated, parent.isInvalidated, child.isInvalidated]
        #expect(after == [true, true, true, true, true, true, true])
        // What is read after it belongs to the new read transaction.
        let again = realm.objects(InvalidatedItem.self)
        #expect(!again.isInvalidated)
        #expect(again.count == 2)
        #expect(again.filter("value = 1").first?.tags.isInvalidated == false)
    }

    /// RLMRealm's testInvalidateDuringWriteRollsBack (and testInWriteTransaction's last lines).
    @Test func invalidateInsideAWriteRollsItBack() throws {
        let realm = try open()
        realm.beginWrite()
        realm.create(InvalidatedItem.self, value: ["value": 1])
        realm.invalidate()
        #expect(!realm.isInWriteTransaction)
        #expect(realm.objects(InvalidatedItem.self).count == 0)
    }

    /// RLMRealm's testCanRestartReadTransactionAfterInvalidate and
    /// testInvalidateBeforeReadDoesNotAssert.
    @Test func aRealmReadsTheNewestVersionAfterInvalidate() throws {
        let realm = try open()
        realm.invalidate()
        try realm.write { realm.create(InvalidatedItem.self, value: ["value": 1]) }
        realm.invalidate()
        let configuration = folder.configuration([InvalidatedItem.self])
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            try other.write { other.create(InvalidatedItem.self, value: ["value": 2]) }
        }
        #expect(Array(realm.objects(InvalidatedItem.self).map(\.value)).sorted() == [1, 2])
    }

    /// RLMRealm's testNotificationsFireEvenWithoutReadTransaction: a Realm's observer still hears
    /// of commits after `invalidate()`.
    @Test func aRealmObserverHearsOfCommitsAfterInvalidate() throws {
        let realm = try open()
        var notified = 0
        let token = realm.observe { _, _ in notified += 1 }
        realm.invalidate()
        let configuration = folder.configuration([InvalidatedItem.self])
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            try other.write { other.create(InvalidatedItem.self, value: ["value": 2]) }
        }
        realm.refresh()
        #expect(notified == 1)
        token.invalidate()
    }
}
