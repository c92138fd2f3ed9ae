import Foundation
import Synchronization
import Testing
@testable import Trellis

// Models for delete rules (beyond Realm, issue 40): an order owns its lines, invoice, tags and
// notes; a line owns its part; nodes own their successors and children (chains and cycles).
enum CascadeModels {
    final class Order: Object {
        override class func className() -> String { "COrder" }
        @Persisted var name = ""
        @Persisted(onDelete: .cascade) var lines: List<Line>
        @Persisted(onDelete: .cascade) var invoice: Invoice?
        @Persisted(onDelete: .cascade) var tags: MutableSet<Tag>
        @Persisted(onDelete: .cascade) var notes: Map<String, Note?>
        @Persisted var customer: Customer?
        @Persisted var address: CAddress?
    }

    final class Line: Object {
        override class func className() -> String { "CLine" }
        @Persisted var name = ""
        @Persisted(onDelete: .cascade) var part: Part?
    }

    final class Part: Object {
        override class func className() -> String { "CPart" }
        @Persisted var name = ""
    }

    final class Invoice: Object {
        override class func className() -> String { "CInvoice" }
        @Persisted var number = 0
    }

    final class Tag: Object {
        override class func className() -> String { "CTag" }
        @Persisted var name = ""
    }

    final class Note: Object {
        override class func className() -> String { "CNote" }
        @Persisted var text = ""
    }

    final class Customer: Object {
        override class func className() -> String { "CCustomer" }
        @Persisted var name = ""
        @Persisted var favourite: Line?
    }

    /// An embedded object whose own link cascades: deleted with its order, it takes its part.
    final class CAddress: EmbeddedObject {
        override class func className() -> String { "CAddress" }
        @Persisted var city = ""
        @Persisted(onDelete: .cascade) var depot: Part?
    }

    final class Node: Object {
        override class func className() -> String { "CNode" }
        @Persisted var name = ""
        @Persisted(onDelete: .cascade) var next: Node?
        @Persisted(onDelete: .cascade) var children: List<Node>
    }

    static let types: [ObjectBase.Type] = [Order.self, Line.self, Part.self, Invoice.self, Tag.self, Note.self,
                                           Customer.self, CAddress.self, Node.self]
}

/// Classes with primary keys, as App Services needs (links are stored as primary keys).
enum SyncedCascade {
    final class Owner: Object {
        override class func className() -> String { "CSyncedOwner" }
        @Persisted(primaryKey: true) var _id = 0
        @Persisted(onDelete: .cascade) var items: List<Item>
        @Persisted(onDelete: .cascade) var first: Item?
    }

    final class Item: Object {
        override class func className() -> String { "CSyncedItem" }
        @Persisted(primaryKey: true) var _id = 0
    }
}

enum SyncedNullify {
    final class Owner: Object {
        override class func className() -> String { "CSyncedOwner" }
        @Persisted(primaryKey: true) var _id = 0
        @Persisted var items: List<SyncedCascade.Item>
        @Persisted var first: SyncedCascade.Item?
    }
}

/// The same classes without any delete rule: Realm's behaviour.
enum NullifyModels {
    final class Order: Object {
        override class func className() -> String { "COrder" }
        @Persisted var name = ""
        @Persisted var lines: List<CascadeModels.Line>
        @Persisted var invoice: CascadeModels.Invoice?
        @Persisted var tags: MutableSet<CascadeModels.Tag>
        @Persisted var notes: Map<String, CascadeModels.Note?>
        @Persisted var customer: CascadeModels.Customer?
        @Persisted var address: CascadeModels.CAddress?
    }

    static let types: [ObjectBase.Type] = [Order.self, CascadeModels.Line.self, CascadeModels.Part.self,
                                           CascadeModels.Invoice.self, CascadeModels.Tag.self, CascadeModels.Note.self,
                                           CascadeModels.Customer.self, CascadeModels.CAddress.self,
                                           CascadeModels.Node.self]
}

/// `@Persisted(onDelete: .cascade)`: deleting an object deletes what its cascading links point
/// at, recursively; everything else keeps Realm's rule (links cleared).
@Suite struct CascadeDeleteTests {
    typealias M = CascadeModels
    let folder = TemporaryFolder()

    func openRealm(name: String = "cascade.realm") throws -> Realm {
        try Realm(configuration: folder.configuration(M.types, name: name))
    }

    /// An order with two lines (each with a part), an invoice, two tags, two notes (one key
    /// nil), a customer whose favourite is the first line, and an address with a depot.
    @discardableResult
    func addOrder(_ realm: Realm, _ name: String = "o") throws -> M.Order {
        try realm.write {
            let order = M.Order(value: [
                "name": name,
                "lines": [["name": "\(name)1", "part": ["name": "\(name)p1"]], ["name": "\(name)2", "part": ["name": "\(name)p2"]]],
                "invoice": ["number": 7],
                "tags": [["name": "\(name)t1"], ["name": "\(name)t2"]],
                "notes": ["a": ["text": "\(name)n1"], "b": ["text": "\(name)n2"], "c": NSNull()],
                "address": ["city": "Oslo", "depot": ["name": "\(name)depot"]],
            ])
            realm.add(order)
            let customer = M.Customer(value: ["name": "c-\(name)"])
            customer.favourite = order.lines[0]
            order.customer = customer
            return order
        }
    }

    func counts(_ realm: Realm) -> [String: Int] {
        ["lines": realm.objects(M.Line.self).count, "parts": realm.objects(M.Part.self).count,
         "invoices": realm.objects(M.Invoice.self).count, "tags": realm.objects(M.Tag.self).count,
         "notes": realm.objects(M.Note.self).count, "customers": realm.objects(M.Customer.self).count,
         "orders": realm.objects(M.Order.self).count]
    }

    // MARK: - What a delete takes with it

    @Test func deletingTheOwnerDeletesWhatItsCascadingLinksListsSetsAndMapsPointAt() throws {
        let realm = try openRealm()
        let order = try addOrder(realm)
        #expect(counts(realm) == ["lines": 2, "parts": 3, "invoices": 1, "tags": 2, "notes": 2, "customers": 1,
                                  "orders": 1])
        let customer = try #require(order.customer)
        try realm.write { realm.delete(order) }
        // Lines and their parts (recursively), the invoice, tags, notes and the embedded
        // address's depot are gone; the customer (no rule) stays, its link to a line cleared.
        #expect(counts(realm) == ["lines": 0, "parts": 0, "invoices": 0, "tags": 0, "notes": 0, "customers": 1,
                                  "orders": 0])
        #expect(customer.favourite == nil)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func withoutARuleDeletingTheOwnerOnlyClearsLinksAsInRealm() throws {
        let realm = try Realm(configuration: folder.configuration(NullifyModels.types, name: "nullify.realm"))
        let order = try realm.write {
            realm.create(NullifyModels.Order.self, value: [
                "lines": [["name": "l", "part": ["name": "p"]]], "invoice": ["number": 1], "tags": [["name": "t"]],
                "notes": ["a": ["text": "n"]],
            ])
        }
        try realm.write { realm.delete(order) }
        #expect(realm.objects(M.Line.self).count == 1)
        #expect(realm.objects(M.Invoice.self).count == 1)
        #expect(realm.objects(M.Tag.self).count == 1)
        #expect(realm.objects(M.Note.self).count == 1)
        #expect(realm.objects(M.Part.self).count == 1)
    }

    @Test func deletingACascadedObjectAloneLeavesItsOwnerAndClearsTheOwnersLink() throws {
        let realm = try openRealm()
        let order = try addOrder(realm)
        try realm.write { realm.delete(order.lines[0]) }
        #expect(order.lines.count == 1)
        #expect(realm.objects(M.Order.self).count == 1)
        // The line's own part went with it; the other line's part stays.
        #expect(realm.objects(M.Part.self).map(\.name).sorted() == ["odepot", "op2"])
    }

    @Test func cyclesAndObjectsReachedTwiceAreDeletedOnce() throws {
        let realm = try openRealm()
        let (a, outsider) = try realm.write {
            let a = M.Node(value: ["name": "a"]), b = M.Node(value: ["name": "b"]), c = M.Node(value: ["name": "c"])
            a.next = b
            b.next = c
            c.next = a  // a cycle back to the first
            a.children.append(objectsIn: [b, b, c, a])  // b twice, and a itself
            b.children.append(c)
            realm.add(a)
            let outsider = M.Node(value: ["name": "outsider"])
            outsider.children.append(c)  // a link that only nullifies: outsider is not deleted
            realm.add(outsider)
            return (a, outsider)
        }
        #expect(realm.objects(M.Node.self).count == 4)
        try realm.write { realm.delete(a) }
        #expect(realm.objects(M.Node.self).map(\.name) == ["outsider"])
        #expect(outsider.children.isEmpty)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func aLongChainIsDeletedWithoutRecursion() throws {
        let realm = try openRealm()
        let length = 20_000
        let head = try realm.write {
            var next: M.Node?
            for index in (0..<length).reversed() {
                let node = M.Node(value: ["name": "n\(index)"])
                node.next = next
                realm.add(node)
                next = node
            }
            return try #require(next)
        }
        #expect(realm.objects(M.Node.self).count == length)
        try realm.write { realm.delete(head) }
        #expect(realm.objects(M.Node.self).isEmpty)
    }

    @Test func deletingResultsSequencesAndEverythingCascades() throws {
        let realm = try openRealm()
        try addOrder(realm, "x")
        try addOrder(realm, "y")
        let z = try addOrder(realm, "z")
        // A line shared by two orders goes with the first deleted; the other order's list
        // loses it.
        try realm.write { z.lines.append(realm.objects(M.Order.self).filter("name == 'x'").first!.lines[0]) }
        try realm.write { realm.delete(realm.objects(M.Order.self).filter("name == 'x'")) }
        #expect(z.lines.map(\.name) == ["z1", "z2"])
        #expect(realm.objects(M.Line.self).count == 4)
        try realm.write { realm.delete([z, z]) }
        #expect(realm.objects(M.Line.self).map(\.name) == ["y1", "y2"])
        #expect(realm.objects(M.Part.self).count == 3)
        try realm.write { realm.deleteAll() }
        #expect(counts(realm).values.allSatisfy { $0 == 0 })
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func notificationsReportTheCascadedDeletions() throws {
        let realm = try openRealm()
        try addOrder(realm, "keep")
        let order = try addOrder(realm, "gone")
        let log = NotificationTests.CollectionLog<Results<M.Line>>()
        let token = realm.objects(M.Line.self).observe { log.record($0) }
        let partDeleted = Mutex(false)
        let part = try #require(order.lines[1].part)
        let partToken = part.observe { change in
            if case .deleted = change { partDeleted.withLock { $0 = true } }
        }
        realm.refresh()
        try realm.write { realm.delete(order) }
        #expect(log.entries == ["initial", "d[2, 3] i[] m[]"])
        #expect(partDeleted.withLock { $0 })
        token.invalidate()
        partToken.invalidate()
    }

    @Test func aMigrationDeleteCascades() throws {
        do {
            let realm = try openRealm()
            try addOrder(realm)
        }
        var configuration = folder.configuration(M.types, name: "cascade.realm")
        configuration.schemaVersion = 1
        configuration.migrationBlock = { migration, _ in
            migration.enumerateObjects(ofType: "COrder") { old, _ in
                if let old { migration.delete(old) }
            }
        }
        let realm = try Realm(configuration: configuration)
        #expect(counts(realm) == ["lines": 0, "parts": 0, "invoices": 0, "tags": 0, "notes": 0, "customers": 1,
                                  "orders": 0])
    }

    // MARK: - The schema

    @Test func theRuleIsStoredInTheFileAndSeenWithoutTheModels() throws {
        let url = folder.file("stored.realm")
        do {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: M.types))
            try addOrder(realm)
            #expect(realm.core.file.catalog.format >= 5)
            let properties = try #require(realm.schema["COrder"]).properties
            #expect(properties.first { $0.name == "lines" }?.deleteRule == .cascade)
            #expect(properties.first { $0.name == "customer" }?.deleteRule == .nullify)
        }
        let inspection = try FileInspection(fileURL: url)
        let order = try #require(inspection.schema["COrder"])
        #expect(order.properties.filter { $0.deleteRule == .cascade }.map(\.name)
                == ["lines", "invoice", "tags", "notes"])
        #expect(try #require(order.properties.first { $0.name == "lines" }).description.contains("deleteRule = cascade;"))
        // A dynamic Realm (no model classes) deletes by the stored rule.
        let dynamic = try Realm(configuration: .init(fileURL: url))
        let orders = dynamic.dynamicObjects("COrder")
        try dynamic.write { dynamic.delete(orders) }
        #expect(dynamic.dynamicObjects("CLine").isEmpty)
        #expect(dynamic.dynamicObjects("CPart").isEmpty)
        #expect(dynamic.dynamicObjects("CCustomer").count == 1)
    }

    @Test func changingTheRuleIsASchemaChangeThatAMigrationRecords() throws {
        let name = "rule-change.realm"
        do {
            let realm = try Realm(configuration: folder.configuration(NullifyModels.types, name: name))
            try realm.write { realm.create(NullifyModels.Order.self, value: ["lines": [["name": "l"]]]) }
        }
        // Same schema version: the rule is a difference, as an index is.
        #expect {
            _ = try Realm(configuration: folder.configuration(M.types, name: name))
        } throws: { error in
            "\(error)".contains("Property 'COrder.lines' delete rule has been changed from 'nullify' to 'cascade'.")
        }
        var cascading = folder.configuration(M.types, name: name)
        cascading.schemaVersion = 1
        do {
            let realm = try Realm(configuration: cascading)
            #expect(realm.schema["COrder"]?.properties.first { $0.name == "lines" }?.deleteRule == .cascade)
            try realm.write { realm.delete(realm.objects(M.Order.self)) }
            #expect(realm.objects(M.Line.self).isEmpty)
            try realm.write { realm.create(M.Order.self, value: ["lines": [["name": "l2"]]]) }
        }
        // Removing the rule again.
        var nullifying = folder.configuration(NullifyModels.types, name: name)
        nullifying.schemaVersion = 2
        let realm = try Realm(configuration: nullifying)
        #expect(realm.schema["COrder"]?.properties.first { $0.name == "lines" }?.deleteRule == .nullify)
        try realm.write { realm.delete(realm.objects(NullifyModels.Order.self)) }
        #expect(realm.objects(M.Line.self).count == 1)
    }

    @Test func aFormatFourFileOpensReadOnlyAsItIsAndWritableAtTheCurrentFormatWithItsRules() throws {
        let name = "four.realm"
        let url = folder.file(name)
        do {
            let realm = try Realm(configuration: folder.configuration(NullifyModels.types, name: name))
            try realm.write { realm.create(NullifyModels.Order.self, value: ["lines": [["name": "l"]]]) }
        }
        do {
            let environment = try Environment(path: url.path, readOnly: false, initialMapSize: 1 << 24,
                                              mapSizeLimit: 1 << 30)
            let txn = try environment.beginWrite()
            let meta = try #require(try txn.database(named: "meta", create: false))
            var catalog = try FileState.readCatalog(txn, meta: meta, path: url.path)
            catalog.format = 4
            try FileState.writeCatalog(catalog, txn: txn, meta: meta)
            try txn.commit()
        }
        do {
            var readOnly = folder.configuration(NullifyModels.types, name: name)
            readOnly.readOnly = true
            let realm = try Realm(configuration: readOnly)
            #expect(realm.core.file.catalog.format == 4)
            #expect(realm.objects(M.Line.self).count == 1)
        }
        do {
            // A writable open upgrades the file (format 6: compact rows and primary-key entries, CompactUpgrade).
            let realm = try Realm(configuration: folder.configuration(NullifyModels.types, name: name))
            #expect(realm.core.file.catalog.format == SchemaCatalog.formatVersion)
            #expect(realm.objects(M.Line.self).count == 1)
        }
        var cascading = folder.configuration(M.types, name: name)
        cascading.schemaVersion = 1
        let realm = try Realm(configuration: cascading)
        #expect(realm.core.file.catalog.format == SchemaCatalog.formatVersion)
        #expect(realm.schema["COrder"]?.properties.first { $0.name == "lines" }?.deleteRule == .cascade)
        try realm.write { realm.delete(realm.objects(M.Order.self)) }
        #expect(realm.objects(M.Line.self).isEmpty)
    }

    @Test func appServicesSchemasExportNothingForTheRule() throws {
        let cascading = try AppServicesSchema(objectTypes: [SyncedCascade.Owner.self, SyncedCascade.Item.self])
        let nullifying = try AppServicesSchema(objectTypes: [SyncedNullify.Owner.self, SyncedCascade.Item.self])
        #expect(cascading.collectionClassNames == nullifying.collectionClassNames)
        for name in cascading.collectionClassNames {
            #expect(try cascading.jsonSchema(for: name) == nullifying.jsonSchema(for: name))
            #expect(try cascading.relationships(for: name, database: "app")
                    == nullifying.relationships(for: name, database: "app"))
        }
    }

    // MARK: - Sync

    /// Records the changes of every local commit.
    final class ChangeRecorder: SyncCommitHook {
        let commits = Mutex<[[SyncChangedObject]]>([])
        func realmWillCommit(_ realm: Realm, changes: [SyncChangedObject]) throws {
            commits.withLock { $0.append(changes) }
        }
        func realmDidCommit(_ configuration: Realm.Configuration) {}
        func realmDidOpen(_ configuration: Realm.Configuration) {}
        func downloadBeforeOpen(_ configuration: Realm.Configuration,
                                completion: @escaping @Sendable ((any Error)?) -> Void) { completion(nil) }
    }

    @Test func aSyncedDeleteUploadsEveryCascadedDeletionAndADownloadedDeleteDoesNotCascade() throws {
        let hook = ChangeRecorder()
        var configuration = folder.configuration(M.types, name: "synced.realm")
        configuration.syncHook = hook
        let realm = try Realm(configuration: configuration)
        let order = try addOrder(realm)
        try realm.write { realm.delete(order) }
        let deleted = try #require(hook.commits.withLock { $0.last }).filter(\.isDeleted).map(\.className)
        #expect(deleted.sorted() == ["CInvoice", "CLine", "CLine", "CNote", "CNote", "COrder", "CPart", "CPart",
                                     "CPart", "CTag", "CTag"])
        // Applying a downloaded delete: the server sends every object the other device deleted,
        // so nothing cascades here.
        let other = try addOrder(realm, "other")
        try realm.write {
            realm.isApplyingSyncDownload = true
            realm.delete(other)
        }
        realm.isApplyingSyncDownload = false
        #expect(realm.objects(M.Line.self).count == 2)
        #expect(realm.objects(M.Invoice.self).count == 1)
    }
}
