import Foundation
import Testing
@testable import Trellis

// One app's `Note` class before and after an update. In a real app both are the same Swift
// class (same module and name) compiled twice; here they are two classes, and
// `simulateAppUpdate` makes the file name the second as the class that stored it.
enum NoteV0 {
    final class Note: Object {
        override class func className() -> String { "DSNote" }
        @Persisted var title = ""
        @Persisted var words = 0
        @Persisted var tag: Tag?
    }

    final class Tag: Object {
        override class func className() -> String { "DSTag" }
        @Persisted var name = ""
    }
}

enum NoteV1 {
    /// `title` became `heading`; `words` became a String; `pinned` is new.
    final class Note: Object {
        override class func className() -> String { "DSNote" }
        @Persisted var heading = ""
        @Persisted var words = ""
        @Persisted var pinned = false
        @Persisted var tag: NoteV0.Tag?
    }
}

/// `try Realm()` without `objectTypes`, the style of Realm's documentation: the file's model
/// classes are found from the Swift names the file records, so a migration block runs when the
/// file opens, the schema is checked then, and `deleteAll()` empties every class of the file.
@Suite struct DefaultSchemaTests {
    let folder = TemporaryFolder()

    func untyped(version: UInt64 = 0, block: MigrationBlock? = nil) -> Realm.Configuration {
        Realm.Configuration(fileURL: folder.file(), schemaVersion: version, migrationBlock: block)
    }

    /// Two notes written by version 0 of the app, opened without objectTypes.
    func writeVersion0() throws {
        try onOtherThread {
            let realm = try Realm(configuration: untyped())
            try realm.write {
                let tag = NoteV0.Tag(value: ["name": "work"])
                realm.add(NoteV0.Note(value: ["title": "Plan", "words": 120, "tag": tag]))
                realm.add(NoteV0.Note(value: ["title": "Minutes", "words": 800]))
            }
        }
    }

    /// What recompiling the app with the changed class does to the name the file records.
    func simulateAppUpdate() throws {
        let file = try FileState.shared(path: folder.file().path, configuration: untyped())
        let txn = try file.environment.beginWrite()
        var catalog = try FileState.readCatalog(txn, meta: file.meta, path: folder.file().path)
        let index = try #require(catalog.classes.firstIndex { $0.name == "DSNote" })
        catalog.classes[index].swiftType = _mangledTypeName(NoteV1.Note.self)
        try FileState.writeCatalog(catalog, txn: txn, meta: file.meta)
        try txn.commit()
        file.publish([], catalog: catalog)
    }

    @Test func theFileRecordsTheSwiftClassOfEachStoredClass() throws {
        try writeVersion0()
        let catalog = try FileState.shared(path: folder.file().path, configuration: untyped()).catalog
        let note = try #require(catalog.storedClass(named: "DSNote"))
        #expect(SchemaCatalog.modelClass(of: note) == NoteV0.Note.self)
        // A name this program does not have finds nothing (another app's file).
        var foreign = note
        foreign.swiftType = "9OtherApp4NoteC"
        #expect(SchemaCatalog.modelClass(of: foreign) == nil)
    }

    @Test func migrationBlockRunsWhenOpeningWithoutObjectTypes() throws {
        try writeVersion0()
        try simulateAppUpdate()
        let oldVersions = LockedBox<[UInt64]>([])
        try onOtherThread {
            let realm = try Realm(configuration: untyped(version: 1) { migration, oldSchemaVersion in
                oldVersions.mutate { $0.append(oldSchemaVersion) }
                migration.enumerateObjects(ofType: "DSNote") { old, new in
                    guard let old, let new else { return }
                    new["heading"] = old["title"]
                    new["words"] = "\(old["words"] as? Int ?? 0)"
                }
            })
            // The first query works at once: no "Migration is required" trap.
            let notes = realm.objects(NoteV1.Note.self).sorted(byKeyPath: "heading")
            #expect(notes.map(\.heading) == ["Minutes", "Plan"])
            #expect(notes.map(\.words) == ["800", "120"])
            #expect(notes.last?.tag?.name == "work")
            #expect(realm.schema["DSNote"]?.properties.map(\.name) == ["heading", "words", "pinned", "tag"])
            #expect(realm._consistencyProblems().isEmpty)
        }
        #expect(oldVersions.get() == [0])
        #expect(try schemaVersionAtURL(folder.file()) == 1)
    }

    @Test func aChangedClassWithoutAHigherVersionFailsWhenOpening() throws {
        try writeVersion0()
        try simulateAppUpdate()
        let error = try onOtherThread { () -> Realm.Error? in
            do { _ = try Realm(configuration: untyped()); return nil } catch { return error as? Realm.Error }
        }
        #expect(error?.code == .schemaMismatch)
        #expect(error?.message.contains("Property 'DSNote.title' has been removed.") == true)
    }

    @Test func aHigherVersionWithoutABlockMigratesAdditively() throws {
        try writeVersion0()
        try simulateAppUpdate()
        try onOtherThread {
            let realm = try Realm(configuration: untyped(version: 1))
            #expect(realm.objects(NoteV1.Note.self).count == 2)
            #expect(realm.objects(NoteV1.Note.self).allSatisfy { $0.heading == "" && !$0.pinned })
        }
    }

    @Test func aHigherVersionIsRecordedWhenOpening() throws {
        try writeVersion0()
        try onOtherThread { _ = try Realm(configuration: untyped(version: 4)) }
        #expect(try schemaVersionAtURL(folder.file()) == 4)
    }

    @Test func deleteAllEmptiesEveryClassOfTheFile() throws {
        // ProcessDog is a class of another program (the helper): this one has no model for it.
        #expect(try runHelper(["write", folder.file().path, "3"]) == "wrote 3")
        try writeVersion0()
        try onOtherThread {
            let realm = try Realm(configuration: untyped())
            #expect(Set(realm.schema.objectSchema.map(\.className)).isSuperset(of: ["DSNote", "DSTag", "ProcessDog"]))
            try realm.write { realm.deleteAll() }
            #expect(realm.isEmpty)
            #expect(realm._consistencyProblems().isEmpty)
        }
        #expect(try runHelper(["count", folder.file().path]) == "0")
    }

    @Test func aRelaunchedProcessSeesItsDataAtOnce() throws {
        // The helper adds three dogs, then (as a new process) opens without objectTypes.
        #expect(try runHelper(["write", folder.file().path, "3"]) == "wrote 3")
        #expect(try runHelper(["count-untyped", folder.file().path]) == "3 false")
    }

    /// Realm's default schema is every model class of the program (realm-swift's `testSchema`,
    /// `try! Realm().schema["SwiftObject"]!.properties` before any SwiftObject exists).
    @Test func theDefaultSchemaHoldsEveryModelClassOfTheProgramBeforeItIsUsed() throws {
        try onOtherThread {
            let realm = try Realm(configuration: untyped())  // a new, empty file
            #expect(realm.isEmpty)
            let allTypes = try #require(realm.schema["AllTypes"])
            #expect(allTypes.properties.first?.name == "bool")
            #expect(realm.schema["WrappedCounter"]?.isEmbedded == true)
            #expect(realm.schema["Owner"]?["dogs"]?.objectClassName == "Pet")
            let names = Set(realm.schema.objectSchema.map(\.className))
            #expect(names.isSuperset(of: ["AllTypes", "Pet", "Owner", "IntKeyed", "DSTag", "CounterHolder"]))
            // The library's own base classes are not model classes.
            #expect(names.isDisjoint(with: ["ObjectBase", "Object", "EmbeddedObject", "DynamicObject"]))
            // Limits: a name two classes share names neither (NoteV0.Note and NoteV1.Note are
            // both "DSNote"), and a generic class joins once used.
            #expect(realm.schema["DSNote"] == nil)
            #expect(realm.schema["Person"] == nil)  // several test models are named "Person"
            #expect(!names.contains { $0.hasPrefix("GenericHolder") })
            // Listing is not storing: the file holds no class until one is used.
            #expect(try FileState.shared(path: folder.file().path, configuration: untyped()).catalog.classes.isEmpty)
        }
    }

    @Test func anExplicitObjectTypesListIsTheWholeSchema() throws {
        let names = try onOtherThread {
            try Realm(configuration: Realm.Configuration(fileURL: folder.file(), objectTypes: [Dog.self]))
                .schema.objectSchema.map(\.className)
        }
        #expect(names == ["Dog"])
    }
}
