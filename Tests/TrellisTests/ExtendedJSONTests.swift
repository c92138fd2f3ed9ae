import Foundation
import Testing
@testable import Trellis

final class EJSONScalars: Object {
    @Persisted(primaryKey: true) var _id = 0
    @Persisted var double = 0.0
    @Persisted var whole = 0.0
    @Persisted var float: Float = 0
    @Persisted var flag = false
    @Persisted var date = Date(timeIntervalSince1970: 0)
    @Persisted var bytes = Data()
    @Persisted var uuid = UUID()
    @Persisted var decimal = Decimal128(0)
    @Persisted var missing: String?
    @Persisted var numbers: List<Int>
    @Persisted var tags: MutableSet<String>
    @Persisted var scores: Map<String, Int>
}

/// Objects as canonical MongoDB Extended JSON, checked against documents written by hand.
@Suite struct ExtendedJSONTests {
    let folder = TemporaryFolder()

    func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

    func seedRealm(_ name: String = "ejson.realm") throws -> Realm {
        let realm = try Realm(configuration: .init(fileURL: folder.file(name), objectTypes: AtlasSeed.types))
        try realm.write {
            let rex = AtlasSeed.Dog(value: ["_id": try ObjectId(string: "5f1b00000000000000000001"), "name": "Rex", "age": 3])
            let ada = AtlasSeed.Person(value: ["_id": try ObjectId(string: "5f1b00000000000000000002"), "name": "Ada",
                                               "address": ["city": "London"]])
            ada.dog = rex
            ada.dogs.append(rex)
            realm.add(ada)
        }
        return realm
    }

    @Test func dogIsOneCanonicalDocument() throws {
        let realm = try seedRealm()
        let dog = try #require(realm.objects(AtlasSeed.Dog.self).first)
        let expected = #"{"_id":{"$oid":"5f1b00000000000000000001"},"age":{"$numberLong":"3"},"name":"Rex"}"#
        let actual = text(try ExtendedJSON.document(for: dog))
        #expect(actual == expected)
    }

    @Test func linksAreTheTargetsPrimaryKeyEmbeddedObjectsNestAndInversesAreAbsent() throws {
        let realm = try seedRealm()
        let ada = try #require(realm.objects(AtlasSeed.Person.self).first)
        let actual = text(try ExtendedJSON.document(for: ada))
        let expected: String = #"{"_id":{"$oid":"5f1b00000000000000000002"},"#
            + #""address":{"city":"London","country":null,"mayor":null,"postalCode":null,"street":null},"#
            + #""dog":{"$oid":"5f1b00000000000000000001"},"dogs":[{"$oid":"5f1b00000000000000000001"}],"name":"Ada"}"#
        #expect(actual == expected)
    }

    @Test func everyScalarHasItsCanonicalForm() throws {
        let realm = try Realm(configuration: .init(fileURL: folder.file("scalars.realm"), objectTypes: [EJSONScalars.self]))
        try realm.write {
            let object = EJSONScalars(value: [
                "_id": 7, "double": 1.5, "whole": 2.0, "float": Float(0.25), "flag": true,
                "date": Date(timeIntervalSince1970: 1000.5), "bytes": Data([1, 2, 3]),
                "uuid": UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!, "decimal": Decimal128(Decimal(string: "1.25")!),
            ])
            object.numbers.append(objectsIn: [1, 2])
            object.tags.insert("a")
            object.scores["x"] = 9
            realm.add(object)
        }
        let object = try #require(realm.objects(EJSONScalars.self).first)
        let actual = text(try ExtendedJSON.document(for: object))
        let expected: String = #"{"_id":{"$numberLong":"7"},"#
            + #""bytes":{"$binary":{"base64":"AQID","subType":"00"}},"date":{"$date":{"$numberLong":"1000500"}},"#
            + #""decimal":{"$numberDecimal":"1.25"},"double":{"$numberDouble":"1.5"},"flag":true,"#
            + #""float":{"$numberDouble":"0.25"},"missing":null,"numbers":[{"$numberLong":"1"},{"$numberLong":"2"}],"#
            + #""scores":{"x":{"$numberLong":"9"}},"tags":["a"],"#
            + #""uuid":{"$binary":{"base64":"ABEiM0RVZneImaq7zN3u/w==","subType":"04"}},"#
            + #""whole":{"$numberDouble":"2.0"}}"#
        #expect(actual == expected)
    }

    @Test func importRecreatesTheGraphAndUpdatesWithModified() throws {
        let source = try seedRealm("source.realm")
        let dogs = try ExtendedJSON.documents(for: source.objects(AtlasSeed.Dog.self))
        let people = try ExtendedJSON.documents(for: source.objects(AtlasSeed.Person.self))
        let target = try Realm(configuration: .init(fileURL: folder.file("target.realm"), objectTypes: AtlasSeed.types))
        try ExtendedJSON.importDocuments(dogs, as: AtlasSeed.Dog.self, into: target)
        try ExtendedJSON.importDocuments(people, as: AtlasSeed.Person.self, into: target)
        let ada = try #require(target.objects(AtlasSeed.Person.self).first)
        #expect(ada.dog?.name == "Rex")
        #expect(ada.dogs.map(\.age) == [3])
        #expect(ada.address?.city == "London")
        let copied = try ExtendedJSON.document(for: ada)
        let original = try ExtendedJSON.document(for: source.objects(AtlasSeed.Person.self)[0])
        #expect(copied == original)
        // The same document with a changed value updates the existing object.
        let older = Data(#"{"_id":{"$oid":"5f1b00000000000000000001"},"age":{"$numberLong":"4"},"name":"Rex"}"#.utf8)
        try ExtendedJSON.importDocuments([older], as: AtlasSeed.Dog.self, into: target)
        #expect(target.objects(AtlasSeed.Dog.self).map(\.age) == [4])
        #expect(ada.dog?.age == 4)
        #expect(target._consistencyProblems().isEmpty)
    }

    /// A number that is not one is a mismatch for floating-point properties too (it once
    /// slipped through as an optional inside `Any`).
    @Test func importingANonNumberIntoAFloatOrDoubleIsAMismatch() throws {
        let realm = try Realm(configuration: .init(fileURL: folder.file("scalars.realm"), objectTypes: [EJSONScalars.self]))
        for property in ["float", "double"] {
            let document = Data(#"{"_id":{"$numberLong":"1"},"\#(property)":"nope"}"#.utf8)
            #expect {
                try ExtendedJSON.importDocuments([document], as: EJSONScalars.self, into: realm)
            } throws: { error in
                (error as? Realm.Error)?.message.contains("does not fit 'EJSONScalars.\(property)'") == true
            }
        }
        #expect(realm.objects(EJSONScalars.self).isEmpty)
    }

    @Test func importingALinkBeforeItsTargetSaysWhatToImportFirst() throws {
        let source = try seedRealm("source.realm")
        let people = try ExtendedJSON.documents(for: source.objects(AtlasSeed.Person.self))
        let target = try Realm(configuration: .init(fileURL: folder.file("target.realm"), objectTypes: AtlasSeed.types))
        #expect {
            try ExtendedJSON.importDocuments(people, as: AtlasSeed.Person.self, into: target)
        } throws: { error in
            (error as? Realm.Error)?.message.contains("Import 'Dog' documents first") == true
        }
        #expect(target.objects(AtlasSeed.Person.self).isEmpty)
    }

    /// Read by the schema stored in the file (no model classes): the same documents.
    @Test func exportFromTheFileAloneMatchesTheModelExport() throws {
        let realm = try seedRealm("file.realm")
        let fromFile = try ExtendedJSON.documents(inFile: folder.file("file.realm"))
        let people = try ExtendedJSON.documents(for: realm.objects(AtlasSeed.Person.self))
        let dogs = try ExtendedJSON.documents(for: realm.objects(AtlasSeed.Dog.self))
        #expect(fromFile["Person"] == people)
        #expect(fromFile["Dog"] == dogs)
        #expect(fromFile["Address"] == nil)
        #expect(fromFile["DogClub"] == [])
    }
}
