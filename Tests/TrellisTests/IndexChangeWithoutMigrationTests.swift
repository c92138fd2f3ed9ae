import Foundation
import Testing
@testable import Trellis

// One stored class declared without and with an index on `a` (and `name`), at the same
// schema version. Realm (realm-core's ObjectStore::needs_migration) adds and removes indexes
// when the file opens, with no migration and no schemaVersion bump.
enum IndexOff {
    final class Item: Object {
        override class func className() -> String { "IXItem" }
        @Persisted(primaryKey: true) var _id = 0
        @Persisted var a = 0
        @Persisted var name = ""
        @Persisted var tags: List<Tag>
        @Persisted var best: Tag?
        @Persisted var scores: Map<String, Int>
    }

    final class Tag: Object {
        override class func className() -> String { "IXTag" }
        @Persisted var label = ""
        @Persisted(originProperty: "tags") var items: LinkingObjects<Item>
    }

    static let types: [ObjectBase.Type] = [Item.self, Tag.self]
}

enum IndexOn {
    final class Item: Object {
        override class func className() -> String { "IXItem" }
        @Persisted(primaryKey: true) var _id = 0
        @Persisted(indexed: true) var a = 0
        @Persisted(indexed: true) var name = ""
        @Persisted var tags: List<Tag>
        @Persisted var best: Tag?
        @Persisted var scores: Map<String, Int>
    }

    final class Tag: Object {
        override class func className() -> String { "IXTag" }
        @Persisted var label = ""
        @Persisted(originProperty: "tags") var items: LinkingObjects<Item>
    }

    static let types: [ObjectBase.Type] = [Item.self, Tag.self]
}

@Suite struct IndexChangeWithoutMigrationTests {
    let folder = TemporaryFolder()

    func configuration(_ types: [ObjectBase.Type], version: UInt64 = 0, readOnly: Bool = false,
                       block: MigrationBlock? = nil) -> Realm.Configuration
    {
        Realm.Configuration(fileURL: folder.file(), readOnly: readOnly, schemaVersion: version, migrationBlock: block,
                            objectTypes: types)
    }

    /// Objects 1...12 with `a = id % 4`, each with two tags in a list, a best tag and a score.
    static func fill<I: Object, T: Object>(_ realm: Realm, item: I.Type, tag: T.Type, ids: ClosedRange<Int> = 1...12)
        throws
    {
        try realm.write {
            for id in ids {
                let first = realm.create(tag, value: ["label": "t\(id)"])
                let second = realm.create(tag, value: ["label": "u\(id)"])
                realm.create(item, value: ["_id": id, "a": id % 4, "name": "n\(id)", "tags": [first, second],
                                           "best": second, "scores": ["s": id * 10]])
            }
        }
    }

    static func isIndexed(_ realm: Realm, _ property: String) -> Bool? {
        realm.schema["IXItem"]?[property]?.isIndexed
    }

    /// Queries (through the index if the table has one), the objects, their collections and
    /// links, and the file's own check of every index entry against the rows.
    static func expectIntact<I: Object>(_ realm: Realm, _ item: I.Type, ids: ClosedRange<Int> = 1...12) {
        let all = realm.objects(item)
        #expect(all.count == ids.count)
        for a in 0..<4 {
            let expected = ids.filter { $0 % 4 == a }
            #expect(all.filter("a == %d", a).map { $0["_id"] as? Int ?? -1 }.sorted() == expected)
        }
        #expect(all.filter("name == 'n5'").count == (ids.contains(5) ? 1 : 0))
        #expect(all.filter("a == 1 AND name == 'n9'").count == (ids.contains(9) ? 1 : 0))
        #expect(all.filter("tags.@count == 2").count == ids.count)
        #expect(all.filter("ANY tags.label BEGINSWITH 't'").count == ids.count)
        for id in ids {
            guard let object = realm.object(ofType: item, forPrimaryKey: id) else {
                Issue.record("object \(id) is missing")
                continue
            }
            #expect((object["best"] as? Object)?["label"] as? String == "u\(id)")
            #expect((object["scores"] as? Map<String, Int>)?["s"] == id * 10)
        }
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func addingAnIndexOpensWithoutAMigration() throws {
        try onOtherThread {
            let realm = try Realm(configuration: configuration(IndexOff.types))
            try Self.fill(realm, item: IndexOff.Item.self, tag: IndexOff.Tag.self)
            #expect(Self.isIndexed(realm, "a") == false)
        }
        try onOtherThread {
            let realm = try Realm(configuration: configuration(IndexOn.types))
            #expect(Self.isIndexed(realm, "a") == true)
            #expect(Self.isIndexed(realm, "name") == true)
            #expect(Self.isIndexed(realm, "_id") == true)
            Self.expectIntact(realm, IndexOn.Item.self)
            #expect(realm.objects(IndexOn.Item.self).filter("a == 1").map(\._id).sorted() == [1, 5, 9])
            // The table keeps the new index, and the objects written now reach it.
            #expect(realm.core.table(for: IndexOn.Item.self, create: false)?.indexes.map(\.field.name) == ["a", "name"])
            try Self.fill(realm, item: IndexOn.Item.self, tag: IndexOn.Tag.self, ids: 13...16)
            Self.expectIntact(realm, IndexOn.Item.self, ids: 1...16)
            let tag = try #require(realm.objects(IndexOn.Tag.self).filter("label == 'u3'").first)
            #expect(tag.items.map(\._id) == [3])
        }
        #expect(try schemaVersionAtURL(folder.file()) == 0)
        #expect(try FileInspection(fileURL: folder.file()).schema["IXItem"]?["a"]?.isIndexed == true)
    }

    @Test func removingAnIndexOpensWithoutAMigrationAndAddingItAgainRebuildsIt() throws {
        try onOtherThread {
            let realm = try Realm(configuration: configuration(IndexOn.types))
            try Self.fill(realm, item: IndexOn.Item.self, tag: IndexOn.Tag.self)
        }
        try onOtherThread {
            let realm = try Realm(configuration: configuration(IndexOff.types))
            #expect(Self.isIndexed(realm, "a") == false)
            #expect(Self.isIndexed(realm, "_id") == true)
            #expect(realm.core.table(for: IndexOff.Item.self, create: false)?.indexes.isEmpty == true)
            Self.expectIntact(realm, IndexOff.Item.self)
            // Written while unindexed: the index, added again below, must hold these too.
            try realm.write {
                realm.object(ofType: IndexOff.Item.self, forPrimaryKey: 1)?.a = 3
                realm.create(IndexOff.Item.self, value: ["_id": 13, "a": 1, "name": "n13"])
            }
        }
        #expect(try FileInspection(fileURL: folder.file()).schema["IXItem"]?["a"]?.isIndexed == false)
        try onOtherThread {
            let realm = try Realm(configuration: configuration(IndexOn.types))
            let items = realm.objects(IndexOn.Item.self)
            #expect(items.filter("a == 1").map(\._id).sorted() == [5, 9, 13])
            #expect(items.filter("a == 3").map(\._id).sorted() == [1, 3, 7, 11])
            #expect(items.filter("name == 'n13'").count == 1)
            #expect(realm._consistencyProblems().isEmpty)
        }
        #expect(try schemaVersionAtURL(folder.file()) == 0)
    }

    @Test func anIndexChangeAlongAMigrationBuildsTheIndex() throws {
        try onOtherThread {
            let realm = try Realm(configuration: configuration(IndexOff.types))
            try Self.fill(realm, item: IndexOff.Item.self, tag: IndexOff.Tag.self)
        }
        let ran = LockedBox(false)
        try onOtherThread {
            let realm = try Realm(configuration: configuration(IndexOn.types, version: 1) { _, _ in ran.set(true) })
            Self.expectIntact(realm, IndexOn.Item.self)
        }
        #expect(ran.get())
        #expect(try schemaVersionAtURL(folder.file()) == 1)
    }

    @Test func anIndexChangeWithDeleteRealmIfMigrationNeededKeepsTheObjects() throws {
        try onOtherThread {
            let realm = try Realm(configuration: configuration(IndexOff.types))
            try Self.fill(realm, item: IndexOff.Item.self, tag: IndexOff.Tag.self)
        }
        try onOtherThread {
            var config = configuration(IndexOn.types)
            config.deleteRealmIfMigrationNeeded = true
            let realm = try Realm(configuration: config)
            Self.expectIntact(realm, IndexOn.Item.self)
        }
    }

    @Test func aReadOnlyRealmUsesTheIndexesTheFileHas() throws {
        try onOtherThread {
            let realm = try Realm(configuration: configuration(IndexOff.types))
            try Self.fill(realm, item: IndexOff.Item.self, tag: IndexOff.Tag.self)
        }
        // The model adds an index the file lacks: the read-only Realm scans, and writes nothing.
        try onOtherThread {
            let realm = try Realm(configuration: configuration(IndexOn.types, readOnly: true))
            #expect(realm.core.table(for: IndexOn.Item.self, create: false)?.indexes.isEmpty == true)
            Self.expectIntact(realm, IndexOn.Item.self)
        }
        #expect(try FileInspection(fileURL: folder.file()).schema["IXItem"]?["a"]?.isIndexed == false)
    }

    @Test func aReadOnlyRealmWithoutTheModelsIndexStillUsesAndKeepsTheFilesIndex() throws {
        try onOtherThread {
            let realm = try Realm(configuration: configuration(IndexOn.types))
            try Self.fill(realm, item: IndexOn.Item.self, tag: IndexOn.Tag.self)
        }
        try onOtherThread {
            let realm = try Realm(configuration: configuration(IndexOff.types, readOnly: true))
            #expect(realm.core.table(for: IndexOff.Item.self, create: false)?.indexes.map(\.field.name) == ["a", "name"])
            Self.expectIntact(realm, IndexOff.Item.self)
        }
        #expect(try FileInspection(fileURL: folder.file()).schema["IXItem"]?["a"]?.isIndexed == true)
    }

    /// A Realm bound before another one added the index (on another thread: one thread has one
    /// instance per file) writes objects the index then finds.
    @Test func aRealmBoundWithoutTheIndexMaintainsTheIndexAnotherRealmAdded() throws {
        try onOtherThread {
            let old = try Realm(configuration: configuration(IndexOff.types))
            try Self.fill(old, item: IndexOff.Item.self, tag: IndexOff.Tag.self)
            try onOtherThread {
                let new = try Realm(configuration: configuration(IndexOn.types))
                #expect(new.core.table(for: IndexOn.Item.self, create: false)?.indexes.map(\.field.name) == ["a", "name"])
            }
            // A cancelled write forgets what it bound; the snapshot after it binds again.
            old.beginWrite()
            old.create(IndexOff.Item.self, value: ["_id": 99, "a": 1, "name": "n99"])
            old.cancelWrite()
            #expect(old.objects(IndexOff.Item.self).filter("a == 1").map(\._id).sorted() == [1, 5, 9])
            try old.write {
                old.create(IndexOff.Item.self, value: ["_id": 13, "a": 1, "name": "n13"])
                old.object(ofType: IndexOff.Item.self, forPrimaryKey: 2)?.a = 1
                if let three = old.object(ofType: IndexOff.Item.self, forPrimaryKey: 3) { old.delete(three) }
            }
            try onOtherThread {
                let new = try Realm(configuration: configuration(IndexOn.types))
                #expect(new.objects(IndexOn.Item.self).filter("a == 1").map(\._id).sorted() == [1, 2, 5, 9, 13])
                #expect(new.objects(IndexOn.Item.self).filter("name == 'n3'").isEmpty)
                #expect(new.objects(IndexOn.Item.self).filter("name == 'n13'").count == 1)
                #expect(new._consistencyProblems().isEmpty)
            }
            #expect(old.objects(IndexOff.Item.self).filter("a == 1").count == 5)
        }
    }

    /// A Realm bound before another one dropped the index stops reading it.
    @Test func aRealmBoundWithTheIndexStopsUsingTheIndexAnotherRealmDropped() throws {
        try onOtherThread {
            let old = try Realm(configuration: configuration(IndexOn.types))
            try Self.fill(old, item: IndexOn.Item.self, tag: IndexOn.Tag.self)
            try onOtherThread {
                let new = try Realm(configuration: configuration(IndexOff.types))
                try new.write { new.create(IndexOff.Item.self, value: ["_id": 13, "a": 2, "name": "n13"]) }
            }
            old.refresh()
            #expect(old.objects(IndexOn.Item.self).filter("a == 2").map(\._id).sorted() == [2, 6, 10, 13])
            #expect(old.objects(IndexOn.Item.self).filter("name == 'n13'").count == 1)
            try old.write { old.create(IndexOn.Item.self, value: ["_id": 14, "a": 2, "name": "n14"]) }
            #expect(old._consistencyProblems().isEmpty)
            try onOtherThread {
                let new = try Realm(configuration: configuration(IndexOff.types))
                #expect(new.objects(IndexOff.Item.self).filter("a == 2").count == 5)
                #expect(new._consistencyProblems().isEmpty)
            }
        }
    }

    /// A class first used after the Realm opened (not in its schema) cannot have its index
    /// built then: it traps with the index change and how to apply it.
    @Test func aClassFirstUsedAfterOpeningWithAnotherIndexTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TemporaryFolder()
            _ = try? onOtherThread {
                let writer = try Realm(configuration: folder.configuration(IndexOff.types))
                try writer.write { writer.create(IndexOff.Item.self, value: ["_id": 1, "a": 1]) }
            }
            // No objectTypes: the file's classes as recorded (IndexOff's) are the schema.
            let realm = try? Realm(configuration: folder.configuration())
            _ = realm?.objects(IndexOn.Item.self).filter("a == 1").count
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Property 'IXItem.a' has been made indexed."))
        #expect(stderr.contains("open the Realm with objectTypes including 'IXItem' (writable) once"))
    }
}
