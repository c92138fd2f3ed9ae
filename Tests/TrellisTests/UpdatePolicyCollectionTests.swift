import Foundation
import Testing
import Trellis

/// A target of the links of ``UPBag``.
final class UPItem: Object {
    @Persisted(primaryKey: true) var _id = 0
}

/// An embedded value of ``UPBag``'s map.
final class UPBox: EmbeddedObject {
    @Persisted var value = 0
}

/// An object with a set and a map of each kind (values, links, embedded objects) and a list.
final class UPBag: Object {
    @Persisted(primaryKey: true) var _id = 0
    @Persisted var ints: MutableSet<Int>
    @Persisted var scores: Map<String, Int>
    @Persisted var friends: MutableSet<UPItem>
    @Persisted var named: Map<String, UPItem?>
    @Persisted var boxes: Map<String, UPBox?>
    @Persisted var list: List<Int>
    @Persisted var note = ""
}

/// `add(_:update:)` and `create(_:value:update:)` of an existing object's collections, as
/// realm-core's `Set::assign`, `Dictionary::assign` and `List::assign` (object-store): under
/// `.modified` (a diffing policy) a set only inserts the given elements and a map only sets the
/// given keys (an embedded value in place), the old ones stay; a list is set element by
/// element; under `.all` each is emptied first (Realm's ObjectCreationTests, "update: .all
/// deletes the old embedded objects", "update modified modifies the existing embedded objects").
@Suite struct UpdatePolicyCollectionTests {
    let folder = TemporaryFolder()
    static let types: [ObjectBase.Type] = [UPBag.self, UPItem.self, UPBox.self]

    /// A Realm holding bag 1: ints {1, 2}, scores a: 1, b: 2, friends {1, 2}, named a: 1,
    /// boxes a: 1, b: 2, list [1, 2, 3]; and items 1 to 3.
    func realmWithBag() throws -> Realm {
        let realm = try Realm(configuration: folder.configuration(Self.types))
        try realm.write {
            let items = (1...3).map { realm.create(UPItem.self, value: ["_id": $0]) }
            realm.create(UPBag.self, value: ["_id": 1, "ints": [1, 2], "scores": ["a": 1, "b": 2],
                                             "friends": [items[0], items[1]], "named": ["a": items[0]],
                                             "boxes": ["a": ["value": 1], "b": ["value": 2]], "list": [1, 2, 3]])
        }
        return realm
    }

    /// The new values both tests give: ints {2, 3}, scores b: 5, c: 3, friends {3}, named b: 2,
    /// boxes a: 10, list [1, 5].
    static func newValues(_ realm: Realm) -> [String: Any] {
        let item = { (id: Int) in realm.object(ofType: UPItem.self, forPrimaryKey: id) as Any }
        return ["_id": 1, "ints": [2, 3], "scores": ["b": 5, "c": 3], "friends": [item(3)], "named": ["b": item(2)],
                "boxes": ["a": ["value": 10]], "list": [1, 5]]
    }

    static func ids(_ items: some Sequence<UPItem>) -> [Int] { items.map(\._id).sorted() }

    static func entries<Value>(_ map: Map<String, Value>, _ show: (Value) -> String) -> String {
        map.keys.sorted().map { "\($0):\(map[$0].map(show) ?? "none")" }.joined(separator: ",")
    }

    /// What bag 1 holds after a `.modified` update with ``newValues(_:)``, as realm-core keeps it.
    static func expectMerged(_ bag: UPBag) {
        #expect(Array(bag.ints).sorted() == [1, 2, 3])
        #expect(entries(bag.scores) { "\($0)" } == "a:1,b:5,c:3")
        #expect(ids(bag.friends) == [1, 2, 3])
        #expect(entries(bag.named) { $0.map { "\($0._id)" } ?? "nil" } == "a:1,b:2")
        #expect(entries(bag.boxes) { $0.map { "\($0.value)" } ?? "nil" } == "a:10,b:2")
        #expect(Array(bag.list) == [1, 5])
    }

    @Test func addWithUpdateModifiedInsertsIntoSetsAndSetsOnlyTheGivenKeysOfMaps() throws {
        let realm = try realmWithBag()
        let bag = try #require(realm.object(ofType: UPBag.self, forPrimaryKey: 1))
        let boxA = try #require(bag.boxes["a"] ?? nil)
        try realm.write { realm.add(UPBag(value: Self.newValues(realm)), update: .modified) }
        Self.expectMerged(bag)
        // The embedded value under a given key is updated in place, as `Dictionary::insert` does.
        #expect(!boxA.isInvalidated)
        if !boxA.isInvalidated { #expect(boxA.value == 10) }
    }

    @Test func createWithUpdateModifiedInsertsIntoSetsAndSetsOnlyTheGivenKeysOfMaps() throws {
        let realm = try realmWithBag()
        let bag = try #require(realm.object(ofType: UPBag.self, forPrimaryKey: 1))
        let boxA = try #require(bag.boxes["a"] ?? nil)
        try realm.write { realm.create(UPBag.self, value: Self.newValues(realm), update: .modified) }
        Self.expectMerged(bag)
        #expect(!boxA.isInvalidated)
        if !boxA.isInvalidated { #expect(boxA.value == 10) }
    }

    /// Under `.all` each collection is emptied first, and the map's embedded objects are new.
    @Test func addAndCreateWithUpdateAllReplaceSetsMapsAndListsWhole() throws {
        for viaCreate in [false, true] {
            let realm = try realmWithBag()
            let bag = try #require(realm.object(ofType: UPBag.self, forPrimaryKey: 1))
            let boxA = try #require(bag.boxes["a"] ?? nil)
            try realm.write {
                if viaCreate {
                    realm.create(UPBag.self, value: Self.newValues(realm), update: .all)
                } else {
                    realm.add(UPBag(value: Self.newValues(realm)), update: .all)
                }
            }
            #expect(Array(bag.ints).sorted() == [2, 3])
            #expect(Self.entries(bag.scores) { "\($0)" } == "b:5,c:3")
            #expect(Self.ids(bag.friends) == [3])
            #expect(Self.entries(bag.named) { $0.map { "\($0._id)" } ?? "nil" } == "b:2")
            #expect(Self.entries(bag.boxes) { $0.map { "\($0.value)" } ?? "nil" } == "a:10")
            #expect(Array(bag.list) == [1, 5])
            #expect(boxA.isInvalidated)
            try realm.write { realm.deleteAll() }
        }
    }

    /// Only real changes are notified: a `.modified` update that gives elements the set has and
    /// values the map has changes neither (realm-core inserts nothing new and skips equal values).
    @Test func updateModifiedWithTheSameElementsNotifiesNoChangeOfTheSetOrMap() throws {
        let realm = try realmWithBag()
        let bag = try #require(realm.object(ofType: UPBag.self, forPrimaryKey: 1))
        let setChanges = LockedBox<[String]>([])
        let setToken = bag.ints.observe { change in
            if case .update(_, let deletions, let insertions, let modifications) = change,
               !(deletions.isEmpty && insertions.isEmpty && modifications.isEmpty) {
                setChanges.mutate { $0.append("-\(deletions.count)+\(insertions.count)~\(modifications.count)") }
            }
        }
        let mapChanges = LockedBox<[String]>([])
        let mapToken = bag.scores.observe { change in
            if case .update(_, let deletions, let insertions, let modifications) = change,
               !(deletions.isEmpty && insertions.isEmpty && modifications.isEmpty) {
                mapChanges.mutate { $0.append("-\(deletions.sorted())+\(insertions.sorted())~\(modifications.sorted())") }
            }
        }
        try realm.write {
            realm.add(UPBag(value: ["_id": 1, "ints": [2], "scores": ["b": 2], "note": "x"]), update: .modified)
        }
        try realm.write {
            realm.add(UPBag(value: ["_id": 1, "ints": [2, 7], "scores": ["b": 3], "note": "y"]), update: .modified)
        }
        #expect(setChanges.get() == ["-0+1~0"])
        #expect(mapChanges.get() == ["-[]+[]~[\"b\"]"])
        #expect(Array(bag.ints).sorted() == [1, 2, 7])
        setToken.invalidate()
        mapToken.invalidate()
    }
}
