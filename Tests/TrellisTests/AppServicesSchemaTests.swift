import Foundation
import Testing
@testable import Trellis

/// The seed's models (Model Data with Device Sync), as the seed writes them.
enum AtlasSeed {
    final class Dog: Object {
        @Persisted(primaryKey: true) var _id = ObjectId()
        @Persisted var name = ""
        @Persisted var age = 0
        @Persisted(originProperty: "dogs") var person: LinkingObjects<Person>
    }

    final class Person: Object {
        @Persisted(primaryKey: true) var _id = ObjectId()
        @Persisted var name = ""
        @Persisted var dog: Dog?
        @Persisted var dogs: List<Dog>
        @Persisted var address: Address?
        @Persisted(originProperty: "members") var clubs: LinkingObjects<DogClub>
    }

    final class DogClub: Object {
        @Persisted(primaryKey: true) var _id = ObjectId()
        @Persisted var name = ""
        @Persisted var members: List<Person>
        @Persisted var addresses: List<Address>
        @Persisted var tags: MutableSet<String>
        @Persisted var scores: Map<String, Int>
    }

    final class Address: EmbeddedObject {
        @Persisted var street: String?
        @Persisted var city: String?
        @Persisted var country: String?
        @Persisted var postalCode: String?
        @Persisted var mayor: Person?
    }

    final class NoKey: Object {
        @Persisted var name = ""
    }

    final class LinksToNoKey: Object {
        @Persisted(primaryKey: true) var _id = 0
        @Persisted var target: NoKey?
    }

    static let types: [ObjectBase.Type] = [Dog.self, Person.self, DogClub.self, Address.self]
}

@Suite struct AppServicesSchemaTests {
    func json(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func schema() throws -> AppServicesSchema { try AppServicesSchema(objectTypes: AtlasSeed.types) }

    @Test func dogMapsToTheSeedsDocument() throws {
        let dog = try json(try schema().jsonSchema(for: "Dog"))
        let seed = try json(Data(#"{ "title": "Dog", "bsonType": "object", "required": [ "_id", "age", "name" ], "properties": { "_id": { "bsonType": "objectId" }, "name": { "bsonType": "string" }, "age": { "bsonType": "long" } }}"#.utf8))
        #expect(NSDictionary(dictionary: dog).isEqual(to: seed))
    }

    @Test func toOneLinkIsTheTargetsPrimaryKeyAndNotRequired() throws {
        let person = try json(try schema().jsonSchema(for: "Person"))
        let properties = try #require(person["properties"] as? [String: Any])
        #expect((properties["dog"] as? [String: String]) == ["bsonType": "objectId"])
        #expect((person["required"] as? [String]) == ["_id", "name"])
    }

    @Test func toManyLinkIsAnArrayOfPrimaryKeysAndInverseIsAbsent() throws {
        let person = try json(try schema().jsonSchema(for: "Person"))
        let properties = try #require(person["properties"] as? [String: Any])
        let dogs = try #require(properties["dogs"] as? [String: Any])
        #expect(dogs["bsonType"] as? String == "array")
        #expect((dogs["items"] as? [String: String]) == ["bsonType": "objectId"])
        #expect(properties["clubs"] == nil)
        let dog = try json(try schema().jsonSchema(for: "Dog"))
        #expect((dog["properties"] as? [String: Any])?["person"] == nil)
    }

    @Test func embeddedObjectsNestWithTheirTitleWhereverUsed() throws {
        let person = try json(try schema().jsonSchema(for: "Person"))
        let address = try #require((person["properties"] as? [String: Any])?["address"] as? [String: Any])
        #expect(address["title"] as? String == "Address")
        #expect(address["bsonType"] as? String == "object")
        #expect(address["required"] == nil)
        let street = (address["properties"] as? [String: Any])?["street"] as? [String: String]
        #expect(street == ["bsonType": "string"])
        let club = try json(try schema().jsonSchema(for: "DogClub"))
        let addresses = try #require((club["properties"] as? [String: Any])?["addresses"] as? [String: Any])
        #expect(addresses["bsonType"] as? String == "array")
        #expect((addresses["items"] as? [String: Any])?["title"] as? String == "Address")
    }

    @Test func setsAreUniqueArraysAndMapsHaveAdditionalProperties() throws {
        let club = try json(try schema().jsonSchema(for: "DogClub"))
        let properties = try #require(club["properties"] as? [String: Any])
        let tags = try #require(properties["tags"] as? [String: Any])
        #expect(tags["uniqueItems"] as? Bool == true)
        #expect(tags["bsonType"] as? String == "array")
        let scores = try #require(properties["scores"] as? [String: Any])
        #expect(scores["bsonType"] as? String == "object")
        #expect((scores["additionalProperties"] as? [String: String]) == ["bsonType": "long"])
        #expect((club["required"] as? [String]) == ["_id", "name"])
    }

    @Test func relationshipsNameTheTargetCollectionAndItsKey() throws {
        let relationships = try json(try schema().relationships(for: "Person", dataSource: "mongodb-atlas", database: "app"))
        let dog = try #require(relationships["dog"] as? [String: Any])
        #expect(dog["ref"] as? String == "#/relationship/mongodb-atlas/app/Dog")
        #expect(dog["foreign_key"] as? String == "_id")
        #expect(dog["is_list"] as? Bool == false)
        #expect((relationships["dogs"] as? [String: Any])?["is_list"] as? Bool == true)
        #expect((relationships["address.mayor"] as? [String: Any])?["ref"] as? String == "#/relationship/mongodb-atlas/app/Person")
        let club = try json(try schema().relationships(for: "DogClub", database: "app"))
        #expect(Set(club.keys) == ["members", "addresses.[].mayor"])
    }

    @Test func embeddedTypeHasNoCollectionSchema() throws {
        #expect {
            try schema().jsonSchema(for: "Address")
        } throws: { error in
            (error as? Realm.Error)?.message.contains("'Address' is an embedded object") == true
        }
    }

    @Test func linkToATypeWithoutAPrimaryKeyIsAnError() throws {
        let schema = try AppServicesSchema(objectTypes: [AtlasSeed.LinksToNoKey.self, AtlasSeed.NoKey.self])
        #expect {
            try schema.jsonSchema(for: "LinksToNoKey")
        } throws: { error in
            (error as? Realm.Error)?.message.contains("'NoKey', which has no primary key") == true
        }
    }

    @Test func outputIsStableSortedAndPretty() throws {
        let first = try schema().jsonSchema(for: "Person")
        let second = try schema().jsonSchema(for: "Person")
        #expect(first == second)
        let text = String(decoding: first, as: UTF8.self)
        #expect(text.hasPrefix("{\n  \"bsonType\" : \"object\",\n  \"properties\" : {"))
    }

    // MARK: - Import

    /// Export, generate Swift, compile (the generated file is part of this test target), export
    /// again: the same documents.
    @Test func exportImportCompileExportRoundTrips() throws {
        let original = try schema()
        let schemas = try original.collectionClassNames.map { try original.jsonSchema(for: $0) }
        let relationships = try Dictionary(uniqueKeysWithValues: original.collectionClassNames.map {
            ($0, try original.relationships(for: $0, database: "app"))
        })
        let source = try AppServicesSchema.swiftModels(schemas: schemas, relationships: relationships,
                                                       namespace: "GeneratedSeedModels")
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Generated/GeneratedSeedModels.swift")
        let committed = try String(contentsOf: fixture, encoding: .utf8)
        if committed != source { try? source.write(toFile: "/tmp/GeneratedSeedModels.swift", atomically: true, encoding: .utf8) }
        #expect(committed == source, "regenerate Tests/TrellisTests/Generated/GeneratedSeedModels.swift (see /tmp)")
        let compiled = try AppServicesSchema(objectTypes: GeneratedSeedModels.objectTypes)
        for name in original.collectionClassNames {
            #expect(try compiled.jsonSchema(for: name) == original.jsonSchema(for: name), "\(name)")
            #expect(try compiled.relationships(for: name, database: "app") == original.relationships(for: name, database: "app"))
        }
    }

    @Test func importTurnsUnionsWithNullIntoOptionalsAndWarnsAboutTheRest() throws {
        let schema = Data(#"""
        {"title": "Event", "bsonType": "object", "required": ["_id", "count"],
         "properties": {"_id": {"bsonType": "objectId"}, "count": {"bsonType": "int"},
                        "note": {"bsonType": ["string", "null"]}, "pattern": {"bsonType": "regex"},
                        "at": {"bsonType": "timestamp"}, "either": {"bsonType": ["string", "long"]}}}
        """#.utf8)
        let source = try AppServicesSchema.swiftModels(schemas: [schema])
        #expect(source.contains("class Event: Object {"))
        #expect(source.contains("@Persisted(primaryKey: true) var _id: ObjectId"))
        #expect(source.contains("@Persisted var count: Int\n"))
        #expect(source.contains("@Persisted var note: String?"))
        #expect(source.contains("@Persisted var either: AnyRealmValue"))
        #expect(source.contains("// warning: 'Event.pattern' has bsonType 'regex', which Realm models cannot express; skipped."))
        #expect(source.contains("// warning: 'Event.at' has bsonType 'timestamp'"))
        #expect(source.contains("// warning: 'Event.either' has the type union"))
    }
}
