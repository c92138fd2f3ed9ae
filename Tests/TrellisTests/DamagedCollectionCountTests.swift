import Foundation
import Testing
@testable import Trellis

final class CountedCollections: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var tags: MutableSet<String>
    @Persisted var scores: Map<String, Int>
}

/// A set's and a map's `count` is the count stored beside their members (one read, not a walk of
/// the members), believed up to what the file can hold. A damaged file whose stored count
/// disagrees with the members reads without trapping: the set hands out exactly `count` members,
/// and a count no file of this size could hold is replaced by counting the members.
@Suite struct DamagedCollectionCountTests {
    let folder = TemporaryFolder()

    /// Stores `count` as the stored count of `owner`'s property `name` (what a flipped byte does).
    func damageCount(_ realm: Realm, _ owner: CountedCollections, _ name: String, to count: UInt32) throws {
        let table = try #require(realm.core.table(for: CountedCollections.self, create: false))
        let field = try #require(table.info.field(named: name))
        let key = try #require(owner._managed?.key)
        let location = CollectionLocation(table: table, key: key, field: field)
        try realm.write {
            realm.core.putCollectionValue(location.headerKey, withUnsafeBytes(of: count) { Array($0) })
        }
    }

    func ownerWithThreeMembers() throws -> (Realm, CountedCollections) {
        let realm = try Realm(configuration: folder.configuration([CountedCollections.self]))
        let owner = try realm.write {
            realm.create(CountedCollections.self, value: ["id": 1, "tags": ["a", "b", "c"],
                                                          "scores": ["x": 1, "y": 2, "z": 3]])
        }
        #expect(owner.tags.count == 3 && owner.scores.count == 3)
        #expect(realm._consistencyProblems().isEmpty)
        return (realm, owner)
    }

    @Test func aSetWhoseStoredCountDisagreesHandsOutExactlyCountMembers() throws {
        let (realm, owner) = try ownerWithThreeMembers()
        try damageCount(realm, owner, "tags", to: 5)
        #expect(owner.tags.count == 5)
        let all = Array(owner.tags)
        #expect(all.count == 5)
        #expect(all.filter { !$0.isEmpty }.sorted() == ["a", "b", "c"])
        #expect(owner.tags.map { $0 }.count == 5)
        try damageCount(realm, owner, "tags", to: 2)
        #expect(Array(owner.tags).count == 2)
        #expect(owner.tags.count == 2 && owner.tags.map { $0 }.count == 2)
    }

    /// A count no file of this size could hold (over 4,096 and over one member per 64 bytes):
    /// the members are counted instead, so nothing allocates or loops by it.
    @Test func anImplausibleStoredCountIsReplacedByCountingTheMembers() throws {
        let (realm, owner) = try ownerWithThreeMembers()
        try damageCount(realm, owner, "tags", to: 0xFFFF_FFF0)
        try damageCount(realm, owner, "scores", to: 0xFFFF_FFF0)
        #expect(owner.tags.count == 3)
        #expect(Array(owner.tags).sorted() == ["a", "b", "c"])
        #expect(owner.scores.count == 3)
        #expect(Array(owner.scores.keys).sorted() == ["x", "y", "z"])
    }

    /// Mutations keep the stored count in step with the members.
    @Test func insertingAndRemovingKeepTheStoredCount() throws {
        let (realm, owner) = try ownerWithThreeMembers()
        try realm.write {
            owner.tags.insert("d")
            owner.tags.insert("a")
            owner.tags.remove("b")
            owner.scores["w"] = 0
            owner.scores["x"] = 9
            owner.scores.removeObject(for: "y")
        }
        #expect(owner.tags.count == 3 && Set(owner.tags) == ["a", "c", "d"])
        #expect(owner.scores.count == 3)
        #expect(realm._consistencyProblems().isEmpty)
        try realm.write { owner.tags.removeAll(); owner.scores.removeAll() }
        #expect(owner.tags.count == 0 && owner.scores.count == 0)
        #expect(realm._consistencyProblems().isEmpty)
    }
}
