import Foundation
import Testing
import Trellis

final class SubqueryNode: Object {
    @Persisted var name = ""
    @Persisted var intCol = 0
    @Persisted var stringCol = ""
    @Persisted var arrayInt: List<Int>
    @Persisted var arrayCol: List<SubqueryNode>
}

/// A SUBQUERY inside a SUBQUERY, and key paths without the variable inside one, as Realm's
/// QueryTests.testSubquery has them. realm-core evaluates a SUBQUERY's predicate on each element
/// (Realm replaces the variable with the element itself), so a key path without the variable is
/// the element's too: `($0.arrayCol.stringCol == $0.stringCol).count` compares each element
/// with itself, and an inner `($0.arrayCol.intCol != 123).count` counts the element's own
/// `arrayCol`. Before, the typed `.count` of a condition holding another `.count` trapped
/// ("Subqueries must contain a keypath starting with a collection."), and such key paths were
/// read from the object being tested.
@Suite struct RealmQueryNestedSubqueryTests {
    let folder = TemporaryFolder()

    /// "root" (intCol 3, "Foó") holds "child" (intCol 5, "Foo") in its arrayCol, as in Realm's test.
    private func filledRealm() throws -> Realm {
        let realm = try Realm(configuration: folder.configuration([SubqueryNode.self]))
        try realm.write {
            let root = SubqueryNode(value: ["name": "root", "intCol": 3, "stringCol": "Foó"])
            let child = SubqueryNode(value: ["name": "child", "intCol": 5, "stringCol": "Foo"])
            root.arrayCol.append(child)
            realm.add(root)
        }
        return realm
    }

    private func names(_ results: Results<SubqueryNode>) -> [String] { results.map(\.name).sorted() }

    @Test func aSubqueryInsideASubqueryCountsEachElementsOwnCollection() throws {
        let realm = try filledRealm()
        let nodes = realm.objects(SubqueryNode.self)
        let nested: (Query<SubqueryNode>) -> Query<Bool> = {
            ($0.arrayCol.arrayInt.count >= 0 && ($0.arrayCol.intCol != 123).count > 0).count > 0
        }
        #expect(nested(Query<SubqueryNode>._constructForTesting()).description
            == "(SUBQUERY(arrayCol, $col1, (($col1.arrayInt.@count >= %@) && (SUBQUERY(arrayCol, $col2, "
            + "($col2.intCol != %@)).@count > %@))).@count > %@)")
        let text = "SUBQUERY(arrayCol, $a, $a.arrayInt.@count >= 0 AND SUBQUERY(arrayCol, $b, $b.intCol != 123)"
            + ".@count > 0).@count > 0"
        // The child's arrayCol is empty: no element of root's has an element of its own.
        #expect(names(nodes.where(nested)) == [])
        #expect(names(nodes.filter(text)) == [])
        try realm.write {
            nodes.filter("name == 'child'").first?.arrayCol.append(SubqueryNode(value: ["name": "grandchild"]))
        }
        #expect(names(nodes.where(nested)) == ["root"])
        #expect(names(nodes.filter(text)) == ["root"])
    }

    @Test func aKeyPathWithoutTheVariableInsideASubqueryIsTheElements() throws {
        let realm = try filledRealm()
        let nodes = realm.objects(SubqueryNode.self)
        // Root's only element is compared with itself (one match); the child has no elements.
        #expect(names(nodes.where { ($0.arrayCol.stringCol == $0.stringCol).count == 0 }) == ["child"])
        #expect(names(nodes.filter("SUBQUERY(arrayCol, $x, $x.stringCol == stringCol).@count == 0")) == ["child"])
        #expect(names(nodes.filter("SUBQUERY(arrayCol, $x, intCol == 5).@count == 1")) == ["root"])
        #expect(names(nodes.where { ($0.arrayCol.intCol > 0 && $0.intCol <= 5).count > 0 }) == ["root"])
    }

    @Test func subqueriesAreNumberedInTheOrderTheyAreWritten() throws {
        let realm = try filledRealm()
        let query: (Query<SubqueryNode>) -> Query<Bool> = {
            ($0.arrayCol.intCol == 5).count == 1 && ($0.arrayCol.stringCol == "Bar").count == 0
        }
        #expect(query(Query<SubqueryNode>._constructForTesting()).description
            == "((SUBQUERY(arrayCol, $col1, ($col1.intCol == %@)).@count == %@) && "
            + "(SUBQUERY(arrayCol, $col2, ($col2.stringCol == %@)).@count == %@))")
        #expect(names(realm.objects(SubqueryNode.self).where(query)) == ["root"])
        #expect((!(Query<SubqueryNode>._constructForTesting().arrayCol.intCol == 5)).count.description
            == "SUBQUERY(arrayCol, $col1, (NOT $col1.intCol == %@)).@count")
    }

    /// A condition that names no collection still cannot be counted, with Realm's message.
    @Test func aSubqueryWithoutACollectionTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = (Query<SubqueryNode>._constructForTesting().stringCol == "x").count
        }
        #expect(exitTestStandardError(result).contains("Subqueries must contain a keypath starting with a collection."))
    }
}
