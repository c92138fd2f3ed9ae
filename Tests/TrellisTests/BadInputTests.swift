import Foundation
import Testing
@testable import Trellis

/// Bad inputs of docs/RELIABILITY.md's table that no other suite covers: App Services schema
/// JSON that is no schema or names things no Swift model can be called, an encryption key,
/// writing to a read-only Realm, and Extended JSON that is not JSON.
@Suite struct BadInputTests {
    let folder = TemporaryFolder()

    func schemaError(_ schemas: [String], relationships: [String: String] = [:]) -> String? {
        do {
            _ = try AppServicesSchema.swiftModels(schemas: schemas.map { Data($0.utf8) },
                                                  relationships: relationships.mapValues { Data($0.utf8) })
            return nil
        } catch let error as Realm.Error {
            #expect(error.code == .invalidValue)
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func schemaJSONThatIsNoSchemaIsATypedError() {
        #expect(schemaError(["not json"])?.contains("schema 1 of 1 is not valid JSON or not an object") == true)
        #expect(schemaError(["[1, 2]"])?.contains("must be a JSON object") == true)
        #expect(schemaError([#"{"bsonType": "object"}"#])?.contains("needs a \"title\"") == true)
        #expect(schemaError([#"{"title": "Dog", "properties": {}}"#], relationships: ["Dog": "[]"])?
            .contains("The relationships of 'Dog' must be a JSON object.") == true)
    }

    /// A title becomes a class name in Swift source: one that is no identifier would make source
    /// that does not compile, or worse, source someone else wrote.
    @Test func aTitleThatIsNoSwiftIdentifierIsATypedError() {
        for title in ["My Dog", "Dog: Object {}\\nclass Evil", "1Dog", "class", ""] {
            let message = schemaError([#"{"title": "\#(title)", "bsonType": "object", "properties": {}}"#])
            #expect(message?.contains("is not a Swift identifier") == true, "\(title): \(message ?? "no error")")
        }
    }

    @Test func propertyNamesThatAreNoIdentifiersAreMappedAndKeywordsAreQuoted() throws {
        let schema = #"""
            {"title": "Dog", "bsonType": "object", "required": ["_id"], "properties": {
              "_id": {"bsonType": "objectId"},
              "first name": {"bsonType": "string"},
              "x\n}\nfunc evil() {": {"bsonType": "string"},
              "default": {"bsonType": "long"},
              "kennel": {"title": "Bad Title", "bsonType": "object", "properties": {}},
              "owner": {"bsonType": "objectId"}
            }}
            """#
        let relationships = ##"{"owner": {"ref": "#/relationship/mongodb-atlas/app/Evil Class", "foreign_key": "_id"}}"##
        let source = try AppServicesSchema.swiftModels(schemas: [Data(schema.utf8)],
                                                       relationships: ["Dog": Data(relationships.utf8)])
        #expect(source.contains("@Persisted var `default`: Int?"))
        // Stored names that are no identifiers get a Swift name and a propertiesMapping() entry.
        #expect(source.contains("@Persisted var firstName: String?"))
        #expect(source.contains("@Persisted var xFuncEvil: String?"))
        #expect(source.contains(#"["firstName": "first name", "xFuncEvil": "x\n}\nfunc evil() {"]"#))
        #expect(source.contains("is an object titled \"Bad Title\", which is not a Swift identifier; skipped."))
        // The line break in the name stays inside its warning comment.
        #expect(!source.contains("\nfunc evil"))
        #expect(source.split(separator: "\n").allSatisfy { !$0.hasPrefix("func") && !$0.hasPrefix("}\nfunc") })
        // A link whose target is no identifier is not made: the property is read by its own schema.
        #expect(!source.contains("Evil Class"))
        #expect(source.contains("@Persisted var owner: ObjectId?"))
    }

    #if TRELLIS_LMDB
    /// LMDB cannot encrypt: the LMDB build refuses a (64-byte) key; the TrellisStorage build
    /// encrypts (EncryptionTests).
    @Test func anEncryptionKeyIsATypedError() throws {
        var configuration = folder.configuration([Dog.self])
        configuration.encryptionKey = Data(repeating: 1, count: 64)
        let error = try #require(throws: Realm.Error.self) { try Realm(configuration: configuration) }
        #expect(error.code == .fail)
        #expect(error.message.contains("Encryption is not supported by Trellis"))
        #expect(!FileManager.default.fileExists(atPath: configuration.path))
    }
    #endif

    @Test func writingToAReadOnlyRealmTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-exit-\(UUID()).realm")
            _ = try? Realm(configuration: .init(fileURL: url, objectTypes: [Dog.self]))
            var configuration = Realm.Configuration(fileURL: url, objectTypes: [Dog.self])
            configuration.readOnly = true
            let realm = try? Realm(configuration: configuration)
            try? realm?.write { realm?.add(Dog()) }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Can't perform transactions on a read-only Realm"))
    }

    @Test func extendedJSONThatIsNoObjectIsATypedErrorThroughTheModels() throws {
        let realm = try Realm(configuration: folder.configuration([PKDog.self]))
        for document in ["not json", "[1]", "42", ""] {
            let error = try #require(throws: Realm.Error.self) {
                try ExtendedJSON.importDocuments([Data(document.utf8)], as: PKDog.self, into: realm)
            }
            #expect(error.message.contains("must be a JSON object"))
        }
        #expect(realm.objects(PKDog.self).isEmpty)
    }
}
