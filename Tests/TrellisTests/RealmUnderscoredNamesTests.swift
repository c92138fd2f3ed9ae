import Foundation
import Testing
@testable import Trellis

final class ScoredLevels: Object {
    @Persisted var level: Level?
    @Persisted var scores: List<Int>
    @Persisted var optionalScores: List<Int?>
    @Persisted var anyValues: List<AnyRealmValue>
}

// Generic code written against Realm's constraints (issue 40): each compiles only if Trellis
// states the requirement as Realm does.
func smallest<C: RealmCollection>(_ values: C) -> C.Element? where C.Element.PersistedType: MinMaxType { values.min() }
func largest<C: RealmCollection>(_ values: C) -> C.Element? where C.Element.PersistedType: MinMaxType { values.max() }
func total<C: RealmCollection>(_ values: C) -> C.Element where C.Element.PersistedType: AddableType { values.sum() }
func mean<C: RealmCollection>(_ values: C) -> Double? where C.Element.PersistedType: AddableType { values.average() }
func countOfOptionals<T: _RealmCollectionValueInsideOptional>(_ list: List<T?>) -> Int { list.count }
func isDiscoverable<T: _RealmSchemaDiscoverable>(_: T.Type) -> Bool { true }
func isMapEntry<E: _RealmMapValue>(_: E.Type) -> Bool where E.Key == String { true }
func declaresInverse<L: LinkingObjectsProtocol>(_: L.Type) -> L { L(fromType: L.Element.self, property: "dogs") }
func madeByDefault<T: _DefaultConstructible>(_: T.Type) -> T { T() }
func saved<T: Object>(_ object: T, in realm: Realm) -> Object {
    realm.create(type(of: object), value: object, update: .modified)
}

/// Realm's underscored public names that generic code uses.
@Suite struct RealmUnderscoredNamesTests {
    let folder = TemporaryFolder()

    @Test func nameForAKeyPathGivesTheDottedPropertyNames() {
        #expect(_name(for: \Owner.name) == "name")
        #expect(_name(for: \Owner.dog?.name) == "dog.name")
        #expect(_name(for: \Owner.dogs) == "dogs")
    }

    /// Realm's `_DefaultConstructible`: the persistable types made by `init()`.
    @Test func defaultConstructibleTypesMakeTheirDefaultValue() {
        #expect(madeByDefault(Int.self) == 0)
        #expect(madeByDefault(Int8.self) == 0)
        #expect(madeByDefault(Bool.self) == false)
        #expect(madeByDefault(Double.self) == 0)
        #expect(madeByDefault(String.self) == "")
        #expect(madeByDefault(Data.self).isEmpty)
        #expect(madeByDefault(Decimal128.self) == 0)
        #expect(madeByDefault(ObjectId.self) == ObjectId())
        #expect(madeByDefault(AnyRealmValue.self) == .none)
        #expect(madeByDefault(Owner.self).realm == nil)
        #expect(madeByDefault(WrappedCounter.self).realm == nil)
        #expect(madeByDefault(List<Int>.self).isEmpty)
        #expect(madeByDefault(MutableSet<String>.self).isEmpty)
        #expect(madeByDefault(Map<String, Int>.self).isEmpty)
    }

    @Test func sharedSchemaIsTheClassesSchema() {
        #expect(Owner.sharedSchema()?.className == "Owner")
        #expect(Owner.sharedSchema()?.properties.map(\.name).contains("dogSet") == true)
        #expect(KeyedDog.sharedSchema()?.primaryKeyProperty != nil)
        #expect(Object.sharedSchema() == nil)
    }

    @Test func genericAggregatesAndSortsWithRealmsConstraints() throws {
        let realm = try Realm(configuration: folder.configuration([ScoredLevels.self, AllTypes.self, KeyedDog.self]))
        let object = try realm.write {
            realm.create(ScoredLevels.self, value: ["scores": [3, 1, 2], "optionalScores": [4, nil, 6],
                                                    "anyValues": [AnyRealmValue.int(1), .double(2), .int(6)]])
        }
        #expect(smallest(object.scores) == 1)
        #expect(largest(object.scores) == 3)
        #expect(total(object.scores) == 6)
        #expect(mean(object.scores) == 2)
        #expect(countOfOptionals(object.optionalScores) == 3)
        #expect(isDiscoverable(Int.self) && isDiscoverable(List<Int>.self))
        // `average()` of AnyRealmValue values, as a number and as a value.
        let average: Double? = object.anyValues.average()
        #expect(average == 3)
    }

    @Test func typedQueriesCompareAnyRealmValuesAndOptionalEnumRawValues() throws {
        let realm = try Realm(configuration: folder.configuration([ScoredLevels.self, AllTypes.self, KeyedDog.self]))
        try realm.write {
            realm.create(AllTypes.self, value: ["any": AnyRealmValue.int(5), "optSize": Size.large])
            realm.create(AllTypes.self, value: ["any": AnyRealmValue.double(1.5)])
            realm.create(AllTypes.self, value: ["any": AnyRealmValue.string("x")])
            realm.create(ScoredLevels.self, value: ["level": Level.high])
            realm.create(ScoredLevels.self, value: [:])
        }
        #expect(realm.objects(AllTypes.self).where { $0.any > AnyRealmValue.int(2) }.count == 1)
        #expect(realm.objects(AllTypes.self).where { $0.any < AnyRealmValue.int(2) }.count == 1)
        #expect(realm.objects(AllTypes.self).where { $0.any == AnyRealmValue.string("x") }.count == 1)
        #expect(realm.objects(AllTypes.self).where { $0.optSize.rawValue == "large" }.count == 1)
        #expect(realm.objects(ScoredLevels.self).where { $0.level.rawValue == 2 }.count == 1)
        #expect(realm.objects(ScoredLevels.self).where { $0.level.rawValue == nil }.count == 1)
    }

    @Test func binaryPropertiesTakeTheSubstringQueriesOfTypedQueries() throws {
        let realm = try Realm(configuration: folder.configuration([ScoredLevels.self, AllTypes.self, KeyedDog.self]))
        try realm.write {
            realm.create(AllTypes.self, value: ["data": Data([1, 2, 3, 4]), "optData": Data([9, 8])])
            realm.create(AllTypes.self, value: ["data": Data([5, 6])])
        }
        let all = realm.objects(AllTypes.self)
        #expect(all.where { $0.data.contains(Data([2, 3])) }.count == 1)
        #expect(all.where { $0.data.starts(with: Data([5])) }.count == 1)
        #expect(all.where { $0.data.ends(with: Data([3, 4])) }.count == 1)
        #expect(all.where { $0.data.equals(Data([5, 6])) }.count == 1)
        #expect(all.where { $0.data.notEquals(Data([5, 6])) }.count == 1)
        #expect(all.where { $0.optData.contains(Data([8])) }.count == 1)
        #expect(all.where { $0.data.contains($0.optData) }.count == 0)
        // The same as the string form.
        #expect(all.filter("data BEGINSWITH %@", Data([5])).count == 1)
    }

    @Test func realmsNamesForMapEntriesInverseDeclarationsAndMigrationBlocks() {
        #expect(isMapEntry(SingleMapEntry<String, Int>.self))
        #expect(declaresInverse(LinkingObjects<Owner>.self).propertyName == "dogs")
        #expect(MapIndex(offset: 3).offset == 3)
        let block: MigrationObjectEnumerateBlock = { old, new in _ = (old, new) }
        block(nil, nil)
    }

    @Test func createAndAddWithTheRuntimeTypeOfAnObject() throws {
        let realm = try Realm(configuration: folder.configuration([ScoredLevels.self, AllTypes.self, KeyedDog.self]))
        let dog = KeyedDog(name: "Rex", age: 3)
        let stored = try realm.write { saved(dog, in: realm) }
        #expect(stored is KeyedDog)
        #expect(realm.objects(KeyedDog.self).count == 1)
        let object: Object = KeyedDog(value: ["_id": dog._id, "name": "Max"])
        try realm.write { realm.add(object, update: .modified) }
        #expect(realm.objects(KeyedDog.self).first?.name == "Max")
    }
}
