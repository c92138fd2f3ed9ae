import Foundation
import Testing
import Trellis

final class DistinctChild: Object {
    @Persisted var value = 0
}

final class DistinctParent: Object {
    @Persisted var number = 0
    @Persisted var child: DistinctChild?
}

/// `distinct(by:)` on a key path through a to-one link leaves out the objects whose link on
/// the way is nil, as realm-core does ("Remove all rows which have a null link along the way
/// to the distinct columns"; Realm's ResultsDistinctTests.testDistinctResultsUsingKeyPaths:
/// four objects, one without `childIntCol`, distinct on "childIntCol.intCol" gives two). A nil
/// value at the end of the path (not a link) is still a distinct value of its own.
@Suite struct DistinctThroughLinkTests {
    @Test func objectsWithANilLinkOnTheWayAreLeftOut() throws {
        let realm = try Realm(configuration: .init(inMemoryIdentifier: "distinct-link-\(UUID().uuidString)",
                                                   objectTypes: [DistinctParent.self, DistinctChild.self]))
        try realm.write {
            for (number, child) in [(1, 1), (2, 1), (3, 2), (4, nil)] as [(Int, Int?)] {
                let parent = DistinctParent(value: ["number": number])
                parent.child = child.map { DistinctChild(value: ["value": $0]) }
                realm.add(parent)
            }
        }
        let all = realm.objects(DistinctParent.self).sorted(byKeyPath: "number")
        let throughLink = all.distinct(by: ["child.value"])
        #expect(throughLink.map(\.number) == [1, 3])
        #expect(throughLink.allSatisfy { $0.child != nil })
        let typed = all.distinct(by: [\DistinctParent.child?.value])
        #expect(typed.map(\.number) == [1, 3])
        // Without a link on the way, every value counts, nil included.
        #expect(all.distinct(by: ["number"]).count == 4)
    }
}
