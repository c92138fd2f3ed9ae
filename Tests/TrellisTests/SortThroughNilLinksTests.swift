import Foundation
import Testing
import Trellis

final class SortedWalker: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var score: Int?
    @Persisted var friend: SortedWalker?
}

/// Sorting by a key path through a to-one link, as realm-core orders it (BaseDescriptor's
/// Sorter: "Sort null links at the end if ascending, else at beginning"): an object whose link
/// on the way is nil goes after every object with a value, nil values included; descending puts
/// it first. RealmSwift/Tests CustomColumnResultsTest `testCustomColumnResultsSort` reads
/// `results.first!.objectCol!.intCol` after sorting by "objectCol.intCol". Before, Trellis put
/// those objects first, as nil values.
@Suite struct SortThroughNilLinksTests {
    static func realm() throws -> Realm {
        let realm = try Realm(configuration: .init(inMemoryIdentifier: "sort-nil-links-\(UUID().uuidString)",
                                                   objectTypes: [SortedWalker.self]))
        try realm.write {
            let f1 = SortedWalker(value: ["name": "f1", "age": 30])
            let f3 = SortedWalker(value: ["name": "f3", "age": 10, "score": 7])
            realm.add(SortedWalker(value: ["name": "p1", "friend": f1]))
            realm.add(SortedWalker(value: ["name": "p2"]))
            realm.add(SortedWalker(value: ["name": "p3", "friend": f3]))
        }
        return realm
    }

    static func names(_ results: Results<SortedWalker>) -> [String] { results.map(\.name) }

    @Test func objectsWithANilLinkOnTheWayGoLastAscending() throws {
        let all = try Self.realm().objects(SortedWalker.self)
        let sorted = all.sorted(byKeyPath: "friend.age")
        #expect(Array(Self.names(sorted).prefix(2)) == ["p3", "p1"])
        #expect(Set(Self.names(sorted).dropFirst(2)) == ["f1", "f3", "p2"])
    }

    @Test func objectsWithANilLinkOnTheWayGoFirstDescending() throws {
        let all = try Self.realm().objects(SortedWalker.self)
        let sorted = all.sorted(byKeyPath: "friend.age", ascending: false)
        #expect(Set(Self.names(sorted).prefix(3)) == ["f1", "f3", "p2"])
        #expect(Array(Self.names(sorted).dropFirst(3)) == ["p1", "p3"])
    }

    @Test func aNilValueBehindALinkStillSortsFirst() throws {
        let all = try Self.realm().objects(SortedWalker.self)
        let sorted = all.sorted(by: [SortDescriptor(keyPath: "friend.score"), SortDescriptor(keyPath: "name")])
        // p1's friend has no score (nil: first), p3's has 7; then the three without a friend,
        // ordered among themselves by the next descriptor.
        #expect(Self.names(sorted) == ["p1", "p3", "f1", "f3", "p2"])
    }
}
