import Foundation
import Testing
import Trellis

final class OperatorItem: Object {
    @Persisted var name: String?
    @Persisted var count = 0
    @Persisted var price = 0.0
    @Persisted var day = Date(timeIntervalSince1970: 0)
}

final class OperatorShelf: Object {
    @Persisted var items: List<OperatorItem>
    @Persisted var tags: List<String>
}

/// Realm's key-value coding collection operators (RLMResults/RLMArray `valueForKeyPath:`) on
/// Results, List, MutableSet and AnyRealmCollection: `@count`, `@min/@max/@sum/@avg.property`,
/// `@unionOfObjects.property`, `@distinctUnionOfObjects.property`, `@unionOfArrays.property`
/// (Realm's RealmCollectionTypeTests.testValueForKeyPath casts them `as! NSNumber?` and
/// `as! NSArray?`). Before, `@count` and `@unionOfObjects` were read as property names and trapped
/// "Invalid property name '@count' for class …".
@Suite struct KeyValueCodingCollectionOperatorTests {
    private func items() -> [OperatorItem] {
        [OperatorItem(value: ["name": "b", "count": 3, "price": 1.5, "day": Date(timeIntervalSince1970: 20)]),
         OperatorItem(value: ["name": "a", "count": 1, "price": 2.5, "day": Date(timeIntervalSince1970: 10)]),
         OperatorItem(value: ["name": "b", "count": 2, "price": 2.0, "day": Date(timeIntervalSince1970: 30)]),
         OperatorItem(value: ["name": nil, "count": 0, "price": 0.0, "day": Date(timeIntervalSince1970: 0)])]
    }

    private func checkOperators<C: RealmCollection>(_ collection: C, _ label: String) throws {
        #expect((collection.value(forKeyPath: "@count") as? NSNumber)?.intValue == 4, "\(label)")
        #expect((collection.value(forKeyPath: "@max.count") as? NSNumber)?.int64Value == 3, "\(label)")
        #expect((collection.value(forKeyPath: "@min.count") as? NSNumber)?.int64Value == 0, "\(label)")
        #expect((collection.value(forKeyPath: "@sum.count") as? NSNumber)?.int64Value == 6, "\(label)")
        #expect((collection.value(forKeyPath: "@avg.count") as? NSNumber)?.doubleValue == 1.5, "\(label)")
        #expect((collection.value(forKeyPath: "@sum.price") as? NSNumber)?.doubleValue == 6.0, "\(label)")
        #expect(collection.value(forKeyPath: "@max.day") as? Date == Date(timeIntervalSince1970: 30), "\(label)")
        let names = try #require(collection.value(forKeyPath: "@unionOfObjects.name") as? [Any], "\(label)")
        #expect(names.map { "\($0)" } == ["Optional(\"b\")", "Optional(\"a\")", "Optional(\"b\")", "nil"], "\(label)")
        let distinct = try #require(collection.value(forKeyPath: "@distinctUnionOfObjects.count") as? [Any])
        #expect(distinct.count == 4, "\(label)")
        let distinctNames = try #require(collection.value(forKeyPath: "@distinctUnionOfObjects.name") as? [Any])
        #expect(distinctNames.count == 3, "\(label)")
    }

    @Test func operatorsOnManagedAndUnmanagedCollections() throws {
        let unmanaged = OperatorShelf()
        unmanaged.items.append(objectsIn: items())
        try checkOperators(unmanaged.items, "unmanaged list")
        let realm = try Realm(configuration: .init(inMemoryIdentifier: "kvc-operators-\(UUID().uuidString)",
                                                   objectTypes: [OperatorItem.self, OperatorShelf.self]))
        let shelf = OperatorShelf()
        try realm.write {
            realm.add(shelf)
            shelf.items.append(objectsIn: items())
        }
        try checkOperators(shelf.items, "list")
        try checkOperators(realm.objects(OperatorItem.self), "results")
        try checkOperators(AnyRealmCollection(shelf.items), "AnyRealmCollection")
    }

    @Test func emptyCollectionsCountZeroSumZeroAndHaveNoMinimum() throws {
        let realm = try Realm(configuration: .init(inMemoryIdentifier: "kvc-operators-\(UUID().uuidString)",
                                                   objectTypes: [OperatorItem.self, OperatorShelf.self]))
        let none = realm.objects(OperatorItem.self)
        #expect((none.value(forKeyPath: "@count") as? NSNumber)?.intValue == 0)
        #expect((none.value(forKeyPath: "@sum.count") as? NSNumber)?.intValue == 0)
        #expect(none.value(forKeyPath: "@min.count") == nil)
        #expect(none.value(forKeyPath: "@avg.count") == nil)
        #expect((none.value(forKeyPath: "@unionOfObjects.name") as? [Any])?.isEmpty == true)
    }

    @Test func unionOfArraysFlattensACollectionProperty() throws {
        let first = OperatorShelf(value: ["tags": ["x", "y"]])
        let second = OperatorShelf(value: ["tags": ["y"]])
        let realm = try Realm(configuration: .init(inMemoryIdentifier: "kvc-operators-\(UUID().uuidString)",
                                                   objectTypes: [OperatorItem.self, OperatorShelf.self]))
        try realm.write { realm.add([first, second]) }
        let shelves = realm.objects(OperatorShelf.self)
        #expect((shelves.value(forKeyPath: "@unionOfArrays.tags") as? [Any])?.compactMap { $0 as? String } == ["x", "y", "y"])
        #expect((shelves.value(forKeyPath: "@distinctUnionOfArrays.tags") as? [Any])?.count == 2)
    }

    @Test func aNestedKeyPathAfterAnOperatorTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let shelf = OperatorShelf()
            _ = shelf.items.value(forKeyPath: "@sum.count.more")
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Nested key paths are not supported yet for KVC collection operators."))
    }

    @Test func anUnknownOperatorTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let shelf = OperatorShelf()
            _ = shelf.items.value(forKeyPath: "@median.count")
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Unsupported KVC collection operator found in key path '@median.count'"))
    }
}
