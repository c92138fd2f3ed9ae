import Foundation
import Testing
import Trellis

enum ShapeLevel: Int, PersistableEnum { case low = 1, mid = 5, high = 9 }
enum ShapeTag: String, PersistableEnum { case apple, berry, cherry }

/// An amount stored as its cents.
struct ShapeCents: CustomPersistable, Hashable {
    typealias PersistedType = Int
    var cents: Int
    init(persistedValue: Int) { cents = persistedValue }
    var persistableValue: Int { cents }
}

final class ShapeChild: Object {
    @Persisted var price: ShapeCents
    @Persisted var level = ShapeLevel.low
    @Persisted var tags: List<String>
}

final class ShapeItem: Object {
    @Persisted var name = ""
    @Persisted var done = false
    @Persisted var level = ShapeLevel.low
    @Persisted var otherLevel = ShapeLevel.low
    @Persisted var tag = ShapeTag.apple
    @Persisted var price: ShapeCents
    @Persisted var optScore: Int?
    @Persisted var when = Date(timeIntervalSince1970: 0)
    @Persisted var scores: List<Int>
    @Persisted var levels: List<ShapeLevel>
    @Persisted var ratings: Map<String, Double>
    @Persisted var levelMap: Map<String, ShapeLevel>
    @Persisted var children: List<ShapeChild>
}

// Generic code constrained the way Realm's own tests constrain it (QueryTests' validators):
// only through the persisted type, `RealmCollection` and `RealmKeyedCollection`.

private func countGreater<Root: Object, T: _Persistable>(_ realm: Realm, _ lhs: (Query<Root>) -> Query<T>,
                                                         _ value: T) -> Int where T.PersistedType: _QueryNumeric {
    realm.objects(Root.self).where { lhs($0) > value }.count
}

private func countLike<Root: Object, T: _Persistable>(_ realm: Realm, _ lhs: (Query<Root>) -> Query<T>,
                                                      _ pattern: T) -> Int where T.PersistedType: _QueryString {
    realm.objects(Root.self).where { lhs($0).like(pattern) }.count
}

private func countAverageAtLeast<Root: Object, C: RealmCollection>(
    _ realm: Realm, _ lhs: (Query<Root>) -> Query<C>, _ value: C.Element
) -> Int where C.Element.PersistedType: _QueryNumeric {
    realm.objects(Root.self).where { lhs($0).avg >= value }.count
}

private func countMaxBelow<Root: Object, C: RealmCollection>(
    _ realm: Realm, _ lhs: (Query<Root>) -> Query<C>, _ value: C.Element
) -> Int where C.Element.PersistedType: _QueryNumeric {
    realm.objects(Root.self).where { lhs($0).max < value }.count
}

private func countSubscriptAtLeast<Root: Object, M: RealmKeyedCollection>(
    _ realm: Realm, _ lhs: (Query<Root>) -> Query<M>, key: M.Key, _ value: M.Value
) -> Int where M.Value.PersistedType: _QueryNumeric {
    realm.objects(Root.self).where { lhs($0)[key] >= value }.count
}

private func countValueSumAtLeast<Root: Object, M: RealmKeyedCollection>(
    _ realm: Realm, _ lhs: (Query<Root>) -> Query<M>, _ value: M.Value
) -> Int where M.Value.PersistedType: _QueryNumeric {
    realm.objects(Root.self).where { lhs($0).sum >= value }.count
}

private func countKeyPathMaxAtLeast<Root: Object, T: _Persistable>(
    _ realm: Realm, _ lhs: (Query<Root>) -> Query<T>, _ value: T
) -> Int where T.PersistedType: _QueryNumeric {
    realm.objects(Root.self).where { lhs($0).max >= value }.count
}

/// Realm's typed-query API stated on persisted types (`where T.PersistedType: _QueryNumeric`),
/// on `RealmCollection` and on `RealmKeyedCollection`, so generic code and custom persistable
/// types and enums query as in Realm; `Query._constructPredicate()`. Before, none of the generic
/// helpers above compiled against Trellis.
@Suite struct RealmQueryShapeTests {
    let folder = TemporaryFolder()

    private func filledRealm() throws -> Realm {
        let realm = try Realm(configuration: folder.configuration([ShapeItem.self, ShapeChild.self]))
        try realm.write {
            for (index, level) in [ShapeLevel.low, .mid, .high].enumerated() {
                let item = ShapeItem()
                item.name = "item\(index)"
                item.done = index == 1
                item.level = level
                item.otherLevel = .mid
                item.tag = [ShapeTag.apple, .berry, .cherry][index]
                item.price = ShapeCents(persistedValue: 100 * (index + 1))
                item.optScore = index == 0 ? nil : index * 10
                item.when = Date(timeIntervalSince1970: Double(index) * 1000)
                item.scores.append(objectsIn: [index, index + 2])
                item.levels.append(objectsIn: [level, .low])
                item.ratings["x"] = Double(index) + 0.5
                item.ratings["y"] = 1
                item.levelMap["x"] = level
                for cents in [50, 150 * (index + 1)] {
                    let child = ShapeChild()
                    child.price = ShapeCents(persistedValue: cents)
                    child.tags.append(objectsIn: Array(repeating: "t", count: index))
                    item.children.append(child)
                }
                realm.add(item)
            }
        }
        return realm
    }

    @Test func customPersistableEnumAndDateColumnsCompareThroughTheirPersistedType() throws {
        let realm = try filledRealm()
        #expect(countGreater(realm, \Query<ShapeItem>.price, ShapeCents(persistedValue: 150)) == 2)
        #expect(countGreater(realm, \Query<ShapeItem>.level, ShapeLevel.mid) == 1)
        #expect(countGreater(realm, \Query<ShapeItem>.when, Date(timeIntervalSince1970: 500)) == 2)
        #expect(countGreater(realm, \Query<ShapeItem>.optScore, 5) == 2)
        #expect(countLike(realm, \Query<ShapeItem>.tag, ShapeTag.berry) == 1)
        #expect(realm.objects(ShapeItem.self).where { $0.price <= ShapeCents(persistedValue: 200) }.count == 2)
        #expect(Query<ShapeItem>._constructForTesting().price.persistableValue.contains(150...300).description
            == "(price BETWEEN {%@, %@})")
        #expect(realm.objects(ShapeItem.self).where { $0.price.persistableValue.contains(150...300) }.count == 2)
    }

    @Test func twoEnumColumnsCompareByRawValue() throws {
        let realm = try filledRealm()
        #expect(realm.objects(ShapeItem.self).where { $0.level > $0.otherLevel }.map(\.name) == ["item2"])
        #expect(realm.objects(ShapeItem.self).where { $0.level <= $0.otherLevel }.count == 2)
        #expect(Query<ShapeItem>._constructForTesting().level.description == "level")
    }

    @Test func optionalColumnsTakeRangesOfTheirWrappedType() throws {
        let realm = try filledRealm()
        #expect(realm.objects(ShapeItem.self).where { $0.optScore.contains(5...15) }.map(\.name) == ["item1"])
        #expect(realm.objects(ShapeItem.self).where { $0.optScore.contains(10..<20) }.map(\.name) == ["item1"])
    }

    @Test func collectionAggregatesOfGenericCollections() throws {
        let realm = try filledRealm()
        // scores: [0, 2], [1, 3], [2, 4]: averages 1, 2, 3; maxima 2, 3, 4.
        #expect(countAverageAtLeast(realm, \Query<ShapeItem>.scores, 2) == 2)
        #expect(countMaxBelow(realm, \Query<ShapeItem>.scores, 4) == 2)
        // levels: [1, 1], [5, 1], [9, 1] by raw value.
        #expect(countMaxBelow(realm, \Query<ShapeItem>.levels, ShapeLevel.high) == 2)
        #expect(realm.objects(ShapeItem.self).where { $0.levels.rawValue.contains(5) }.map(\.name) == ["item1"])
        #expect(realm.objects(ShapeItem.self).where { $0.levels.rawValue.avg > 2 }.count == 2)
        #expect(Query<ShapeItem>._constructForTesting().levels.rawValue.sum.description == "levels.@sum")
    }

    @Test func mapSubscriptsValuesAndAggregatesOfGenericKeyedCollections() throws {
        let realm = try filledRealm()
        // ratings: x = 0.5, 1.5, 2.5; y = 1.
        #expect(countSubscriptAtLeast(realm, \Query<ShapeItem>.ratings, key: "x", 1.5) == 2)
        #expect(countValueSumAtLeast(realm, \Query<ShapeItem>.ratings, 3) == 1)
        #expect(realm.objects(ShapeItem.self).where { $0.ratings.keys == "y" }.count == 3)
        #expect(realm.objects(ShapeItem.self).where { $0.levelMap.rawValue["x"] == 9 }.map(\.name) == ["item2"])
        #expect(realm.objects(ShapeItem.self).where { $0.ratings.contains(0.5...1) }.map(\.name) == ["item0"])
    }

    @Test func keyPathAggregatesOfPersistedNumericProperties() throws {
        let realm = try filledRealm()
        // children's prices: [50, 150], [50, 300], [50, 450].
        #expect(countKeyPathMaxAtLeast(realm, \Query<ShapeItem>.children.price, ShapeCents(persistedValue: 300)) == 2)
        #expect(Query<ShapeItem>._constructForTesting().children.price.max.description == "children.@max.price")
    }

    @Test func constructPredicateGivesTheTextAndTheValuesInPlaceholderOrder() {
        let query = Query<ShapeItem>._constructForTesting()
        let (text, values) = (query.ratings["x"] > 2.5 && query.level.in([.mid, .high])
            || !query.name.contains("b", options: [.caseInsensitive]))._constructPredicate()
        #expect(text == "(((ratings[%@] > %@) && (level IN %@)) || (NOT name CONTAINS[c] %@))")
        #expect(values.count == 4)
        #expect(values[0] as? String == "x")
        #expect(values[1] as? Double == 2.5)
        #expect(values[2] as? [Int] == [5, 9])
        #expect(values[3] as? String == "b")
        let (rangeText, rangeValues) = query.price.contains(ShapeCents(persistedValue: 1)...ShapeCents(persistedValue: 2))
            ._constructPredicate()
        #expect(rangeText == "(price BETWEEN {%@, %@})")
        #expect(rangeValues.compactMap { $0 as? Int } == [1, 2])
        let (nilText, nilValues) = (query.optScore == nil)._constructPredicate()
        #expect(nilText == "(optScore == %@)")
        #expect(nilValues.count == 1 && nilValues[0] is NSNull)
    }

    /// An aggregate of a property reached through no collection traps when the query runs, with
    /// realm-core's message naming the class (Realm's QueryTests.testAggregateNotSupported).
    @Test func anAggregateOfAPlainPropertyTrapsNamingItsClass() async {
        #expect(Query<ShapeItem>._constructForTesting().optScore.avg.description == "optScore.@avg")
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try Realm(configuration: .init(inMemoryIdentifier: "shape-aggregate",
                                                       objectTypes: [ShapeItem.self, ShapeChild.self]))
            _ = realm.objects(ShapeItem.self).where { $0.when.min > Date() }.count
        }
        #expect(exitTestStandardError(result).contains("Invalid keypath 'when.@min': Property 'ShapeItem.when' is not "
            + "a link or collection and can only appear at the end of a keypath."))
    }

    /// As Realm writes it: a `Bool` property as a condition is `done == true` (`!done`:
    /// `done == false`), groups keep the nesting they were written with, `!` of a group is
    /// `NOT (…)`; the objects found are those of the same conditions.
    @Test func textKeepsRealmsFormAndGroupingAndFindsTheSameObjects() throws {
        let query = Query<ShapeItem>._constructForTesting()
        #expect(query.done._constructPredicate().0 == "done == true")
        #expect((!query.done)._constructPredicate().0 == "done == false")
        #expect((query.name == "a" && query.done).description == "((name == %@) && done == true)")
        #expect((!query.done || query.name == "a").description == "(done == false || (name == %@))")
        #expect((!(query.name == "a" || query.name == "b") && query.done).description
            == "(NOT ((name == %@) || (name == %@)) && done == true)")
        #expect((query.name == "a" && (query.name == "b" && query.name == "c")).description
            == "((name == %@) && ((name == %@) && (name == %@)))")
        #expect((query.name == "a" && query.name == "b" && query.name == "c").description
            == "(((name == %@) && (name == %@)) && (name == %@))")

        let realm = try filledRealm()
        let items = realm.objects(ShapeItem.self)
        #expect(items.where { $0.done }.map(\.name) == ["item1"])
        #expect(items.where { !$0.done }.count == 2)
        #expect(items.where { !($0.name == "item0" || $0.name == "item1") && !$0.done }.map(\.name) == ["item2"])
        #expect(items.where { $0.name != "item0" && ($0.done || $0.level == .high) }.count == 2)
    }

    /// A collection reached through another (`children.tags`) counts per outer element: its
    /// `.count` compares under ANY, and counting that condition is a SUBQUERY over the outer one.
    @Test func aCountOfANestedCollectionIsASubqueryOverTheOuterOne() throws {
        let query = Query<ShapeItem>._constructForTesting()
        #expect((query.children.tags.count >= 1).count.description
            == "SUBQUERY(children, $col1, ($col1.tags.@count >= %@)).@count")
        let realm = try filledRealm()
        // children's tags: item0 none, item1 one per child, item2 two per child.
        #expect(realm.objects(ShapeItem.self).where { ($0.children.tags.count >= 1).count == 2 }.map(\.name)
            == ["item1", "item2"])
        #expect(realm.objects(ShapeItem.self).where { $0.children.tags.count > 1 }.map(\.name) == ["item2"])
    }

    @Test func anEnumsPersistedTypeIsItsRawValue() {
        #expect(ShapeLevel.PersistedType.self == Int.self)
        #expect(ShapeTag.PersistedType.self == String.self)
        #expect(Optional<ShapeLevel>.PersistedType.self == Optional<Int>.self)
    }
}

extension ShapeCents: Comparable {
    static func < (lhs: ShapeCents, rhs: ShapeCents) -> Bool { lhs.cents < rhs.cents }
}
