import Foundation
import Testing
@testable import Trellis

/// A model declared the pre-`@Persisted` way (only what Linux allows: there is no
/// `@objc dynamic`, so scalars use `@Persisted` or `RealmProperty`).
class LegacyPerson: Object {
    @Persisted var name = ""
    let dogs = List<LegacyDog>()
    let tags = MutableSet<String>()
    let scores = Map<String, Int>()
    let age = RealmProperty<Int?>()
    let extra = RealmProperty<AnyRealmValue>()
    @available(*, deprecated)
    let weight = RealmOptional<Double>()
}

class LegacyDog: Object {
    @Persisted var name = ""
    let owners = LinkingObjects(fromType: LegacyPerson.self, property: "dogs")
}

@Suite struct LegacyDeclarationTests {
    let folder = TemporaryFolder()

    func realm() throws -> Realm {
        try Realm(configuration: folder.configuration([LegacyPerson.self, LegacyDog.self]))
    }

    @Test func legacyPropertiesAreInTheSchemaUnderTheirSwiftNames() throws {
        let schema = try realm().schema["LegacyPerson"]
        let properties = try #require(schema).properties.map { "\($0.name):\($0.typeDescription)" }
        #expect(properties == ["name:string", "dogs:array<object<LegacyDog>>", "tags:set<string>",
                               "scores:map<string, int>", "age:int?", "extra:mixed", "weight:double?"])
    }

    @Test @available(*, deprecated)
    func legacyPropertiesAreStoredReadAndWrittenLikePersistedOnes() throws {
        let realm = try realm()
        let person = LegacyPerson()
        person.name = "Ann"
        person.dogs.append(LegacyDog(value: ["name": "Rex"]))
        person.tags.insert("a")
        person.scores["math"] = 9
        person.age.value = 30
        person.extra.value = .fromArray([.int(1)])
        person.weight.value = 61.5
        try realm.write { realm.add(person) }
        #expect(person.dogs.realm != nil)

        let read = try #require(realm.objects(LegacyPerson.self).first)
        #expect(read.dogs.map(\.name) == ["Rex"])
        #expect(Array(read.tags) == ["a"])
        #expect(read.scores["math"] == 9)
        #expect(read.age.value == 30)
        #expect(read.extra.value.listValue?[0] == .int(1))
        #expect(read.weight.value == 61.5)
        #expect(read.dogs[0].owners.map(\.name) == ["Ann"])

        try realm.write {
            read.age.value = nil
            read.weight.value = 2
            read.dogs.append(LegacyDog(value: ["name": "Fido"]))
            read.scores["art"] = 3
            read.extra.value.listValue?.append(.string("two"))
        }
        #expect(person.age.value == nil)
        #expect(person.weight.value == 2)
        #expect(person.dogs.count == 2)
        #expect(person.scores.count == 2)
        #expect(person.extra.value.listValue?.count == 2)
        #expect(realm.objects(LegacyPerson.self).filter("age == nil AND weight == 2 AND dogs.@count == 2").count == 1)
        #expect(realm.objects(LegacyPerson.self).filter("ANY dogs.name == 'Fido'").count == 1)
    }

    @Test @available(*, deprecated)
    func legacyPropertiesWorkWithDynamicAccessAndCreate() throws {
        let realm = try realm()
        try realm.write {
            realm.create(LegacyPerson.self, value: ["name": "Bo", "dogs": [["name": "Rex"]], "tags": ["x", "y"],
                                                    "scores": ["a": 1], "age": 4, "weight": 1.5])
        }
        let person = try #require(realm.objects(LegacyPerson.self).first)
        #expect(person["age"] as? Int == 4)
        #expect((person["dogs"] as? List<LegacyDog>)?.count == 1)
        #expect(person.tags.count == 2)
        #expect(person.weight.value == 1.5)
        try realm.write { person["age"] = 5 }
        #expect(person.age.value == 5)
        let unmanaged = LegacyPerson(value: ["name": "C", "age": 7, "tags": ["t"]])
        #expect(unmanaged.age.value == 7)
        #expect(Array(unmanaged.tags) == ["t"])
    }

    @Test func writingALegacyValueOutsideAWriteTraps() async {
        await #expect(processExitsWith: .failure) {
            let folder = TemporaryFolder()
            let realm = try Realm(configuration: folder.configuration([LegacyPerson.self, LegacyDog.self]))
            let person = LegacyPerson()
            try realm.write { realm.add(person) }
            person.age.value = 1
        }
    }

    /// Realm's RealmCollectionTypeTests.testFilterList / testFilterResults reach a legacy
    /// `let array = List<SwiftObject>()` through a Swift key path (`where { $0.array… }`,
    /// `_name(for:)`, sorting); it names the property like a `@Persisted` one. Before: trap
    /// "Key path \LegacyPerson.dogs on 'LegacyPerson' does not name a persisted property."
    @Test func legacyCollectionsAreNamedBySwiftKeyPaths() throws {
        let realm = try realm()
        try realm.write {
            let person = LegacyPerson()
            person.name = "Ann"
            person.dogs.append(LegacyDog(value: ["name": "Rex"]))
            person.tags.insert("a")
            realm.add(person)
            realm.add(LegacyPerson(value: ["name": "Bob"]))
        }
        #expect(_name(for: \LegacyPerson.dogs) == "dogs")
        #expect(_name(for: \LegacyPerson.tags) == "tags")
        #expect(_name(for: \LegacyPerson.scores) == "scores")
        let dogs = realm.objects(LegacyDog.self)
        #expect(realm.objects(LegacyPerson.self).where { $0.dogs.containsAny(in: dogs) }.map(\.name) == ["Ann"])
        #expect(realm.objects(LegacyPerson.self).where { $0.tags.contains("a") }.map(\.name) == ["Ann"])
    }

    /// `let anyCol = RealmProperty<AnyRealmValue>()` and `RealmOptional` through a Swift key path
    /// (Realm's KeyPathTests.testOldObjectSyntax: `_name(for: \SwiftOldSyntaxAllTypesObject.anyCol)`).
    /// The key path reads the holder object, which the field keeps. Before: trap "Key path
    /// \LegacyPerson.extra on 'LegacyPerson' does not name a persisted property."
    @Test @available(*, deprecated) func legacyValueHoldersAreNamedBySwiftKeyPaths() {
        #expect(_name(for: \LegacyPerson.age) == "age")
        #expect(_name(for: \LegacyPerson.extra) == "extra")
        #expect(_name(for: \LegacyPerson.weight) == "weight")
    }
}
