import Foundation
import Testing
@testable import Trellis

final class KeyedVal: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var note: String?
    @Persisted var numbers: List<Int>
    @Persisted var maybeNumbers: List<Int?>
    @Persisted var friends: List<KeyedVal>
    @Persisted var best: KeyedVal?
    @Persisted var byName: Map<String, KeyedVal?>
}

/// Issue 34, defect 5: the import through a file's stored schema enforces the schema as the
/// Swift API does (a null non-optional primary key used to be stored, reading as a second
/// object with key 0), and the consistency checker finds null and duplicate primary keys.
@Suite struct ImportSchemaEnforcementTests {
    let folder = TemporaryFolder()

    /// A file holding `KeyedVal` 0.
    func file() throws -> URL {
        let url = folder.file("keyed.realm")
        try onOtherThread {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [KeyedVal.self]))
            try realm.write { realm.add(KeyedVal(value: ["id": 0, "name": "zero"])) }
        }
        return url
    }

    func documents(_ lines: String...) -> [String: [Data]] { ["KeyedVal": lines.map { Data($0.utf8) }] }

    @Test func aNullNonOptionalPrimaryKeyIsRefusedAndTheFileLeftAsItWas() throws {
        let url = try file()
        let before = try Data(contentsOf: url)
        #expect {
            try ExtendedJSON.importDocuments(documents(#"{"id": null, "name": "null"}"#), intoFile: url)
        } throws: { error in
            let message = (error as? Realm.Error)?.message ?? ""
            return (error as? Realm.Error)?.code == .invalidValue
                && message.hasPrefix("In document 1 of 'KeyedVal' (line 1 of KeyedVal.json): ")
                && message.contains("'KeyedVal.id' is not optional")
        }
        #expect(try Data(contentsOf: url) == before)
        let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [KeyedVal.self]))
        #expect(realm.objects(KeyedVal.self).filter("id == 0").count == 1)
        #expect(realm._consistencyProblems().isEmpty)
    }

    /// Each document breaks one rule of the Swift API; each import through the stored schema
    /// and through the model classes is refused, naming the document and the property.
    @Test(arguments: [
        (#"{"id": 1, "name": null}"#, "'KeyedVal.name' is not optional"),
        (#"{"id": 1, "numbers": [1, null]}"#, "the elements of 'KeyedVal.numbers' are not optional"),
        (#"{"id": 1, "friends": [null]}"#, "the elements of 'KeyedVal.friends' are not optional"),
        (#"{"id": 1, "name": 5}"#, "does not fit 'KeyedVal.name'"),
        (#"{"id": {"$numberInt": "2147483648"}}"#, "does not fit 'KeyedVal.id'"),
        (#"{"id": {"$numberLong": "9223372036854775808"}}"#, "does not fit 'KeyedVal.id'"),
        (#"{"name": "no key"}"#, "the document has no primary key 'id'"),
    ])
    func aDocumentBreakingTheSchemaIsRefusedByBothImports(_ document: String, _ expected: String) throws {
        let url = try file()
        let before = try Data(contentsOf: url)
        do {
            _ = try ExtendedJSON.importDocuments(documents(#"{"id": 7}"#, document), intoFile: url)
            Issue.record("the stored-schema import took \(document)")
        } catch let error as Realm.Error {
            #expect(error.message.hasPrefix("In document 2 of 'KeyedVal'"), "\(error.message)")
            #expect(error.message.contains(expected), "\(error.message)")
        }
        #expect(try Data(contentsOf: url) == before)

        let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [KeyedVal.self]))
        do {
            try ExtendedJSON.importDocuments([Data(#"{"id": 7}"#.utf8), Data(document.utf8)], as: KeyedVal.self,
                                             into: realm)
            Issue.record("the import through the model classes took \(document)")
        } catch let error as Realm.Error {
            #expect(error.message.hasPrefix("In document 2 of 'KeyedVal'"), "\(error.message)")
            #expect(error.message.contains(expected), "\(error.message)")
        }
        #expect(realm.objects(KeyedVal.self).count == 1)
    }

    @Test func nullsWhereTheSwiftAPITakesThemAreImported() throws {
        let url = try file()
        let document = #"{"id": 1, "note": null, "best": null, "maybeNumbers": [null, 2], "byName": {"a": null}}"#
        #expect(try ExtendedJSON.importDocuments(documents(document), intoFile: url) == 1)
        let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [KeyedVal.self]))
        let one = try #require(realm.object(ofType: KeyedVal.self, forPrimaryKey: 1))
        #expect(one.note == nil && one.best == nil)
        #expect(Array(one.maybeNumbers) == [nil, 2])
        #expect(one.byName.count == 1)
        #expect(realm._consistencyProblems().isEmpty)
    }

    /// The file the old importer made (a null key in the index and the row), and a row whose key
    /// another row holds: the checker names both.
    @Test func theCheckerFindsNullAndDuplicatePrimaryKeys() throws {
        let url = try file()
        let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [KeyedVal.self]))
        #expect(realm._consistencyProblems().isEmpty)
        let table = try #require(realm.core.table(for: KeyedVal.self, create: false))
        let fields = table.info.storedFields
        func row(id: _StoredValue.Payload) -> [_StoredValue.Payload] {
            fields.map { field in
                if field.isPrimaryKey { return id }
                if field.typeInfo.collection != .none { return .none }
                return field.name == "name" ? .string("made") : .null
            }
        }
        try realm.write {
            let nullKey = realm.core.allocateKey(in: table)
            realm.core.writeRow(table, key: nullKey, values: row(id: .null), isNew: true)
            realm.core.insertPrimaryKey(table, .null, key: nullKey)
            let duplicate = realm.core.allocateKey(in: table)
            realm.core.writeRow(table, key: duplicate, values: row(id: .int(0)), isNew: true)
        }
        let problems = realm._consistencyProblems()
        #expect(problems.contains { $0.contains("KeyedVal[2].id is null, but the primary key is not optional") },
                "\(problems)")
        #expect(problems.contains { $0.contains("KeyedVal[3] has the primary key 0 of KeyedVal[1]") }, "\(problems)")
        #expect(problems.contains { $0.contains("KeyedVal has 3 objects but 2 primary-key entries") }, "\(problems)")
    }
}
