import Foundation
import Testing
@testable import Trellis

/// Importing Extended JSON into a file by its stored schema, without the model classes: the
/// export of the imported file is the export it came from, updates follow `.modified`, and a
/// failed import leaves the file as it was.
@Suite struct ExtendedJSONFileImportTests {
    let folder = TemporaryFolder()

    static let ada = "5f1b00000000000000000002"

    /// Ada (address in London) has Rex as `dog` and in `dogs`; the Sprinters club has Ada as a
    /// member, a regional address whose mayor is Ada, tags and scores.
    func source() throws -> URL {
        let url = folder.file("source.realm")
        let realm = try Realm(configuration: .init(fileURL: url, objectTypes: AtlasSeed.types))
        try realm.write {
            let rex = AtlasSeed.Dog(value: ["_id": try ObjectId(string: "5f1b00000000000000000001"), "name": "Rex", "age": 3])
            let ada = AtlasSeed.Person(value: ["_id": try ObjectId(string: Self.ada), "name": "Ada",
                                               "address": ["city": "London"]])
            ada.dog = rex
            ada.dogs.append(rex)
            let club = AtlasSeed.DogClub(value: ["_id": try ObjectId(string: "5f1b00000000000000000003"),
                                                 "name": "Sprinters"])
            club.members.append(ada)
            club.addresses.append(AtlasSeed.Address(value: ["city": "Leeds", "mayor": ada]))
            club.tags.insert(objectsIn: ["fast", "friendly"])
            club.scores["2025"] = 7
            realm.add(club)
        }
        return url
    }

    /// A file with the seed's schema and no objects.
    func emptyTarget(_ name: String = "target.realm") throws -> URL {
        let url = folder.file(name)
        _ = try Realm(configuration: .init(fileURL: url, objectTypes: AtlasSeed.types))
        return url
    }

    func count(_ url: URL, _ className: String) throws -> Int {
        try FileInspection(fileURL: url).classes.first { $0.schema.className == className }?.objectCount ?? -1
    }

    @Test func importWithoutModelsRecreatesTheGraphExactly() throws {
        let exported = try ExtendedJSON.documents(inFile: try source())
        let target = try emptyTarget()
        #expect(try ExtendedJSON.importDocuments(exported, intoFile: target) == 3)
        #expect(try ExtendedJSON.documents(inFile: target) == exported)
        #expect(try count(target, "Address") == 2)
        let realm = try Realm(configuration: .init(fileURL: target, objectTypes: AtlasSeed.types))
        #expect(realm._consistencyProblems().isEmpty)
        let ada = try #require(realm.object(ofType: AtlasSeed.Person.self, forPrimaryKey: try ObjectId(string: Self.ada)))
        #expect(ada.clubs.map(\.name) == ["Sprinters"])
        #expect(ada.dog?.person.map(\.name) == ["Ada"])
    }

    @Test func reimportingUpdatesInPlaceAndReplacesEmbeddedObjects() throws {
        let exported = try ExtendedJSON.documents(inFile: try source())
        let target = try emptyTarget()
        _ = try ExtendedJSON.importDocuments(exported, intoFile: target)
        let check = try Realm(configuration: .init(fileURL: target, objectTypes: AtlasSeed.types))
        #expect(check._consistencyProblems().isEmpty, "after the first import")
        _ = try ExtendedJSON.importDocuments(exported, intoFile: target)
        check.refresh()
        #expect(check._consistencyProblems().isEmpty, "after the second import")
        #expect(try count(target, "Person") == 1)
        #expect(try count(target, "Address") == 2)  // the replaced embedded objects are gone
        #expect(try ExtendedJSON.documents(inFile: target) == exported)

        // A partial document changes only what it gives.
        let rename = Data(#"{"_id":{"$oid":"\#(Self.ada)"},"name":"Ada L.","dogs":[]}"#.utf8)
        _ = try ExtendedJSON.importDocuments(["Person": [rename]], intoFile: target)
        let realm = try Realm(configuration: .init(fileURL: target, objectTypes: AtlasSeed.types))
        let ada = try #require(realm.object(ofType: AtlasSeed.Person.self, forPrimaryKey: try ObjectId(string: Self.ada)))
        #expect(ada.name == "Ada L.")
        #expect(ada.dogs.isEmpty)
        #expect(ada.dog?.name == "Rex")
        #expect(ada.address?.city == "London")
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func aLinkToAMissingObjectFailsAndLeavesTheFileAsItWas() throws {
        let exported = try ExtendedJSON.documents(inFile: try source())
        let target = try emptyTarget()
        let before = try Data(contentsOf: target)
        #expect {
            try ExtendedJSON.importDocuments(["Person": exported["Person"] ?? []], intoFile: target)
        } throws: { error in
            (error as? Realm.Error)?.message.contains("'Person.dog' links to the 'Dog' with primary key "
                + "5f1b00000000000000000001, which is neither in the file nor in the import") == true
        }
        #expect(try count(target, "Person") == 0)
        #expect(try Data(contentsOf: target) == before)
    }

    @Test func anUnknownOrEmbeddedClassOrAWrongValueIsAnError() throws {
        let target = try emptyTarget()
        func message(_ documents: [String: [Data]]) -> String? {
            do {
                _ = try ExtendedJSON.importDocuments(documents, intoFile: target)
                return nil
            } catch {
                return (error as? Realm.Error)?.message
            }
        }
        #expect(message(["Cat": [Data("{}".utf8)]])?.contains("The file has no class 'Cat'. Its classes: Address, Dog") == true)
        #expect(message(["Address": [Data("{}".utf8)]])?.contains("'Address' is embedded") == true)
        let wrong = Data(#"{"_id":{"$oid":"5f1b00000000000000000009"},"age":"old"}"#.utf8)
        #expect(message(["Dog": [wrong]])?.contains("does not fit 'Dog.age' (int)") == true)
        #expect(try count(target, "Dog") == 0)
    }

    @Test func everyScalarTypeSurvivesTheRoundTripWithoutModels() throws {
        let url = folder.file("scalars.realm")
        let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [EJSONScalars.self]))
        try realm.write {
            let object = EJSONScalars()
            object._id = 7
            object.double = 1.5
            object.float = 2.25
            object.flag = true
            object.date = Date(timeIntervalSince1970: 1_700_000_000.123)
            object.bytes = Data([1, 2, 3])
            object.decimal = Decimal128(Decimal(string: "12.50")!)
            object.numbers.append(objectsIn: [3, 1, 2])
            object.tags.insert("x")
            object.scores["a"] = 1
            realm.add(object)
        }
        let exported = try ExtendedJSON.documents(inFile: url)
        let target = folder.file("scalars-copy.realm")
        _ = try Realm(configuration: .init(fileURL: target, objectTypes: [EJSONScalars.self]))
        #expect(try ExtendedJSON.importDocuments(exported, intoFile: target) == 1)
        #expect(try ExtendedJSON.documents(inFile: target) == exported)
    }

    @Test func unknownFieldsStopTheImportUnlessIgnored() throws {
        let target = try emptyTarget()
        let dog = #"{"_id":{"$oid":"5f1b00000000000000000009"},"name":"Rex","age":{"$numberLong":"3"},"colour":"brown"}"#
        let documents = ["Dog": [Data(dog.utf8)]]
        do {
            _ = try ExtendedJSON.importDocuments(documents, intoFile: target)
            Issue.record("an unknown field was dropped silently")
        } catch let error as Realm.Error {
            #expect(error.code == .invalidValue)
            #expect(error.message.hasPrefix("In document 1 of 'Dog' (line 1 of Dog.json): 'Dog' has no property "
                + "'colour'. Remove it from the document, or import with --ignore-unknown"))
        }
        #expect(try count(target, "Dog") == 0)
        #expect(try ExtendedJSON.importDocuments(documents, intoFile: target, ignoringUnknownProperties: true) == 1)
        #expect(try count(target, "Dog") == 1)
    }

    @Test func unknownPropertiesOfEmbeddedDocumentsNameTheirParentAndLine() throws {
        let target = try emptyTarget()
        let before = try Data(contentsOf: target)
        let person = #"{"_id":{"$oid":"\#(Self.ada)"},"name":"Ada","address":{"city":"Oslo","zip":"0150","floor":2}}"#
        // A blank line first: document numbers are line numbers.
        let documents = ["Person": [Data(), Data("  ".utf8), Data(person.utf8)]]
        #expect {
            try ExtendedJSON.importDocuments(documents, intoFile: target)
        } throws: { error in
            (error as? Realm.Error)?.message.hasPrefix("In document 3 of 'Person' (line 3 of Person.json): the embedded "
                + "'Address' in 'Person.address' has no properties 'floor', 'zip'. Remove them") == true
        }
        #expect(try Data(contentsOf: target) == before)
        #expect(try ExtendedJSON.importDocuments(documents, intoFile: target, ignoringUnknownProperties: true) == 1)
        let realm = try Realm(configuration: .init(fileURL: target, objectTypes: AtlasSeed.types))
        #expect(realm.objects(AtlasSeed.Person.self).first?.address?.city == "Oslo")
    }

    @Test func everyDocumentErrorSaysWhichDocument() throws {
        let target = try emptyTarget()
        func message(_ lines: [String]) -> String? {
            do {
                _ = try ExtendedJSON.importDocuments(["Dog": lines.map { Data($0.utf8) }], intoFile: target)
                return nil
            } catch {
                return (error as? Realm.Error)?.message
            }
        }
        let good = #"{"_id":{"$oid":"5f1b00000000000000000009"},"name":"Rex"}"#
        #expect(message([good, "[1]"])?.hasPrefix("In document 2 of 'Dog' (line 2 of Dog.json): an Extended JSON "
            + "document must be a JSON object.") == true)
        #expect(message([good, "", #"{"name":"Fido"}"#])?.hasPrefix("In document 3 of 'Dog' (line 3 of Dog.json): the "
            + "document has no primary key '_id'.") == true)
        #expect(message([#"{"_id":{"$oid":"5f1b0000000000000000000a"},"age":"old"}"#])?
            .hasPrefix("In document 1 of 'Dog' (line 1 of Dog.json): ") == true)
        #expect(try count(target, "Dog") == 0)
    }
}
