import Foundation
import Testing
import Trellis
@testable import TrellisSync

/// A chain node whose link is stored under another name (`propertiesMapping()`).
final class SyncMappedChainNode: Object {
    @Persisted(primaryKey: true) var _id = 0
    @Persisted var next: SyncMappedChainNode?
    @Persisted var label = ""

    override class func propertiesMapping() -> [String: String] { ["next": "next_node"] }
}

/// An embedded object linking to a top-level object.
final class SyncNodeTag: EmbeddedObject {
    @Persisted var node: SyncChainNode?
    @Persisted var label = ""
}

/// A top-level object holding embedded objects with links.
final class SyncTaggedNode: Object {
    @Persisted(primaryKey: true) var _id = 0
    @Persisted var tag: SyncNodeTag?
    @Persisted var tags: List<SyncNodeTag>
    @Persisted var note = ""
}

/// Unresolved links (a link whose target the file does not have) after the cases
/// ForwardLinkTests covers (the target arrives by download): the target is created on this
/// device, and the target never comes.
@Suite(.serialized)
struct UnresolvedLinkTests {
    /// Writes nodes with SQL: `_id`, its `next` (nil for none) and its `later` list.
    static func insert(_ database: String, _ nodes: [(id: Int, next: Int?, later: [Int])]) throws {
        func long(_ value: Int) -> String { "jsonb_build_object('$numberLong', '\(value)')" }
        let rows = nodes.map { node in
            let next = node.next.map(long) ?? "'null'::jsonb"
            return "(\(node.id), jsonb_build_object('_id', \(long(node.id)), 'next', \(next), "
                + "'later', jsonb_build_array(\(node.later.map(long).joined(separator: ", ")))))"
        }
        try PostgresFixture.psql(database, "INSERT INTO \"SyncChainNode\" (_id, doc) VALUES \(rows.joined(separator: ", "))")
    }

    /// The server's document of node `id`: `next|later,later,…` (`-` for no next).
    static func serverLinks(_ database: String, _ id: Int) throws -> String {
        func number(_ json: String) -> String { "COALESCE(\(json)->>'$numberLong', \(json)->>'$numberInt', \(json) #>> '{}')" }
        return try PostgresFixture.psql(database, """
            SELECT COALESCE(\(number("doc->'next'")), '-') || '|' || COALESCE((SELECT string_agg(\(number("e")), ',' ORDER BY n)
              FROM jsonb_array_elements(doc->'later') WITH ORDINALITY AS t(e, n)), '')
            FROM "SyncChainNode" WHERE _id = \(id)
            """).trimmingCharacters(in: .newlines)
    }

    /// The device's node `id`: `next later,later,…` (`-` for no next or no node).
    static func localLinks(_ device: Device, _ id: Int) throws -> String {
        try device.run { realm in
            guard let node = realm.object(ofType: SyncChainNode.self, forPrimaryKey: id) else { return "-" }
            return (node.next.map { String($0._id) } ?? "-") + " " + node.later.map { String($0._id) }.joined(separator: ",")
        }
    }

    /// The unresolved-link records of the device's file, as `source -> target` (node `_id`s),
    /// sorted; and whether every record has its entry in the index by linking object.
    static func records(_ device: Device) throws -> (links: [String], indexed: Bool) {
        try device.run { realm in
            var links = [String](), indexed = true
            for (key, _) in realm.syncStoreEntries(prefix: SyncStoreLayout.unresolvedPrefix) {
                let rest = Array(key.dropFirst(SyncStoreLayout.unresolvedPrefix.count))
                let length = Int(rest.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
                let target = String(decoding: rest.dropFirst(4).prefix(length), as: UTF8.self)
                let prefix = SyncStoreLayout.unresolved(to: target)
                guard let source = SyncStoreLayout.unresolvedSource(key, prefixLength: prefix.count),
                      let node = realm.syncObject(className: source.className, objectKey: source.objectKey) as? SyncChainNode
                else {
                    links.append("gone -> \(target.split(separator: "\u{0}").last ?? "")")
                    continue
                }
                links.append("\(node._id) -> \(target.split(separator: "\u{0}").last ?? "")")
                let reverse = SyncStoreLayout.unresolved(from: source.className, source.objectKey, to: target)
                if realm.syncStoreGet(reverse) == nil { indexed = false }
            }
            let reverseCount = realm.syncStoreEntries(prefix: SyncStoreLayout.unresolvedBySourcePrefix).count
            return (links.sorted(), indexed && reverseCount == links.count)
        }
    }

    /// A local edit of node 1: node 2 appended to its `later` list.
    static func appendNodeTwoToNodeOne(_ device: Device) throws {
        try device.write { realm in
            let one = realm.object(ofType: SyncChainNode.self, forPrimaryKey: 1)
            let two = realm.object(ofType: SyncChainNode.self, forPrimaryKey: 2)
            if let one, let two { one.later.append(two) }
        }
    }

    static func device(_ server: ServerProcess, query: String? = nil) async throws -> Device {
        try await ForwardLinkTests.device(server, query: query)
    }

    /// Node 1 links to node 7, which nobody has: the link is unresolved (nil, left out of the
    /// list). The device then creates node 7: the link is set at once, as Realm resolves a
    /// link when an object with the primary key it names is created. A later change of node 1
    /// uploads that change only; before, the link stayed nil on the device, and that change
    /// uploaded its absence, so the server lost `next` and the list's 7.
    @Test func aLinkIsSetWhenItsTargetIsCreatedOnTheDevice() async throws {
        let fixture = try SyncFixture(types: [SyncChainNode.self])
        try Self.insert(fixture.database, [(1, 7, [2, 7]), (2, nil, [])])
        let device = try await Self.device(fixture.server)
        try await device.sync(timeout: .seconds(60))
        #expect(try Self.localLinks(device, 1) == "- 2")
        #expect(try Self.records(device).links == ["1 -> 7"])

        try device.write { realm in realm.add(SyncChainNode(value: ["_id": 7])) }
        #expect(try Self.localLinks(device, 1) == "7 2,7")
        #expect(try Self.records(device).links == [])

        try Self.appendNodeTwoToNodeOne(device)
        try await device.sync(timeout: .seconds(60))
        #expect(try Self.serverLinks(fixture.database, 1) == "7|2,7,2")
        #expect(try Self.localLinks(device, 1) == "7 2,7,2")
        await device.close()
    }

    /// The same, with the target created in the same write as a change of the linking object:
    /// the change is measured against the object with its link set.
    @Test func aLinkIsSetWhenItsTargetIsCreatedInTheSameWriteAsAChangeOfItsObject() async throws {
        let fixture = try SyncFixture(types: [SyncChainNode.self])
        try Self.insert(fixture.database, [(1, 7, [7, 2]), (2, nil, [])])
        let device = try await Self.device(fixture.server)
        try await device.sync(timeout: .seconds(60))
        #expect(try Self.localLinks(device, 1) == "- 2")

        try device.write { realm in
            let seven = realm.create(SyncChainNode.self, value: ["_id": 7])
            let one = realm.object(ofType: SyncChainNode.self, forPrimaryKey: 1)
            one?.later.append(seven)
        }
        #expect(try Self.localLinks(device, 1) == "7 7,2,7")
        try await device.sync(timeout: .seconds(60))
        #expect(try Self.serverLinks(fixture.database, 1) == "7|7,2,7")
        #expect(try Self.records(device).links == [])
        await device.close()
    }

    /// A link stored under another name (`next` as `next_node`) to a target nobody has is kept
    /// by a local edit of its object, as an unmapped one is. Before, the upload looked for the
    /// link under its Swift name, found nothing, and sent the object without it: the server
    /// lost `next_node`.
    @Test func aLocalEditKeepsAnUnresolvedLinkStoredUnderAnotherName() async throws {
        let fixture = try SyncFixture(types: [SyncMappedChainNode.self])
        try PostgresFixture.psql(fixture.database, """
            INSERT INTO "SyncMappedChainNode" (_id, doc) VALUES (1, jsonb_build_object('_id',
              jsonb_build_object('$numberLong', '1'), 'next_node', jsonb_build_object('$numberLong', '7'), 'label', 'a'))
            """)
        let device = try await Device(server: fixture.server, types: [SyncMappedChainNode.self], subscriptions: { subs in
            subs.append(QuerySubscription<SyncMappedChainNode>(name: "nodes"))
        })
        try await device.sync(timeout: .seconds(60))
        #expect(try device.run { $0.object(ofType: SyncMappedChainNode.self, forPrimaryKey: 1)?.next == nil })

        try device.write { realm in realm.object(ofType: SyncMappedChainNode.self, forPrimaryKey: 1)?.label = "b" }
        try await device.sync(timeout: .seconds(60))
        let stored = try PostgresFixture.psql(fixture.database, """
            SELECT (doc->>'label') || '|' || COALESCE(doc->'next_node'->>'$numberLong', doc->>'next_node', '-')
            FROM "SyncMappedChainNode" WHERE _id = 1
            """).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(stored == "b|7")
        await device.close()
    }

    /// A record is kept while its object exists and links to the missing target (a later
    /// subscription may bring it), and goes with the object or the link: deleted on the
    /// server, deleted on the device, out of the subscriptions, or linking elsewhere now (on
    /// the server, or on the device once the server sent the change back). Before, every
    /// record stayed in the file for good.
    @Test func recordsOfLinksWhoseTargetsNeverComeGoWithTheirObjectOrLink() async throws {
        let fixture = try SyncFixture(types: [SyncChainNode.self])
        // 101…106 never exist; 10 and 11 do.
        try Self.insert(fixture.database, [(1, 101, []), (2, 102, [102]), (3, 103, []), (4, 104, []),
                                           (5, 105, [10]), (6, 106, []), (10, nil, []), (11, nil, [])])
        let device = try await Self.device(fixture.server, query: "_id != 99")
        try await device.sync(timeout: .seconds(60))
        let before = try Self.records(device)
        #expect(before.links == ["1 -> 101", "2 -> 102", "3 -> 103", "4 -> 104", "5 -> 105", "6 -> 106"])
        #expect(before.indexed)

        // Deleted on the server; linking elsewhere on the server.
        try PostgresFixture.psql(fixture.database, "DELETE FROM \"SyncChainNode\" WHERE _id = 1")
        try PostgresFixture.psql(fixture.database, """
            UPDATE "SyncChainNode" SET doc = jsonb_set(jsonb_set(doc, '{next}', jsonb_build_object('$numberLong', '10')),
              '{later}', '[]'::jsonb) WHERE _id = 2
            """)
        #expect(try await eventually(.seconds(60)) {
            try Self.localLinks(device, 1) == "-" && Self.localLinks(device, 2) == "10 "
        })
        // Deleted on the device; linking elsewhere on the device.
        try device.write { realm in
            if let three = realm.object(ofType: SyncChainNode.self, forPrimaryKey: 3) { realm.delete(three) }
            let four = realm.object(ofType: SyncChainNode.self, forPrimaryKey: 4)
            four?.next = realm.object(ofType: SyncChainNode.self, forPrimaryKey: 11)
        }
        try await device.sync(timeout: .seconds(60))
        // Out of the subscriptions.
        let subscriptions = try device.run { $0.subscriptions }
        try await withTimeout(.seconds(60)) {
            try await subscriptions.update {
                $0.removeAll()
                $0.append(QuerySubscription<SyncChainNode>(name: "nodes", query: "_id != 6"))
            }
        }
        try await device.sync(timeout: .seconds(60))
        #expect(try Self.localLinks(device, 6) == "-")
        #expect(try Self.serverLinks(fixture.database, 4) == "11|")
        #expect(try Self.serverLinks(fixture.database, 5) == "105|10")
        let after = try Self.records(device)
        #expect(after.links == ["5 -> 105"])
        #expect(after.indexed)
        await device.close()
    }

    /// A client reset records the links it leaves unresolved, as a download does: node 1 comes
    /// in the reset's state linking to node 7, which nobody has. When the device then creates
    /// node 7 the link is set, and a later edit of node 1 keeps it on the server. Before, the
    /// reset recorded nothing: creating node 7 left node 1's link nil, and the edit uploaded
    /// its absence, so the server lost `next` and the list's 7.
    @Test func aClientResetRecordsTheLinksItLeavesUnresolved() async throws {
        let fixture = try SyncFixture(types: [SyncChainNode.self])
        try Self.insert(fixture.database, [(2, nil, [])])
        let device = try await Self.device(fixture.server)
        try await device.sync(timeout: .seconds(60))
        try device.session.suspend()
        try Self.insert(fixture.database, [(1, 7, [2, 7])])
        // The history up to node 1's insert is gone (pruning): the device is behind it and resets.
        try PostgresFixture.psql(fixture.database,
                                 "UPDATE trellis_server_identity SET history_floor = (SELECT max(version) FROM trellis_history)")
        try device.session.resume()
        #expect(try await eventually(.seconds(60)) { try Self.localLinks(device, 1) == "- 2" })
        #expect(fixture.server.log.contains("error 222"))
        let records = try Self.records(device)
        #expect(records.links == ["1 -> 7"])
        #expect(records.indexed)

        try device.write { realm in realm.add(SyncChainNode(value: ["_id": 7])) }
        #expect(try Self.localLinks(device, 1) == "7 2,7")
        try Self.appendNodeTwoToNodeOne(device)
        try await device.sync(timeout: .seconds(60))
        #expect(try Self.serverLinks(fixture.database, 1) == "7|2,7,2")
        await device.close()
    }

    /// Records of a file synced before the records were also kept by linking object (only
    /// `u/` entries, by target) are indexed when the session connects, and a record of an
    /// object gone since is dropped; indexed, they go with their objects. Before, such records
    /// stayed for good.
    @Test func recordsWrittenWithoutTheirLinkingObjectIndexAreIndexedWhenTheSessionConnects() async throws {
        let fixture = try SyncFixture(types: [SyncChainNode.self])
        try Self.insert(fixture.database, [(1, 101, []), (2, nil, [102]), (3, 103, [])])
        let device = try await Self.device(fixture.server)
        try await device.sync(timeout: .seconds(60))
        #expect(try Self.records(device).links == ["1 -> 101", "2 -> 102", "3 -> 103"])

        // The old shape: no `r/` entries; and a record of a node deleted since (no node has key 999).
        try device.session.suspend()
        try device.write { realm in
            for (key, _) in realm.syncStoreEntries(prefix: SyncStoreLayout.unresolvedBySourcePrefix) {
                try realm.syncStoreDelete(key)
            }
            let gone = ExtendedJSONBatchDecoder.linkTargetIdentity(className: "SyncChainNode", primaryKey: 104)
            try realm.syncStorePut(SyncStoreLayout.unresolved(to: gone, from: "SyncChainNode", 999), [])
        }
        let old = try Self.records(device)
        #expect(old.links == ["1 -> 101", "2 -> 102", "3 -> 103", "gone -> 104"])
        #expect(!old.indexed)

        try device.session.resume()
        #expect(try await eventually(.seconds(60)) { try Self.records(device).indexed })
        #expect(try Self.records(device).links == ["1 -> 101", "2 -> 102", "3 -> 103"])
        // Node 1 deleted on the server, node 3 on the device: their records go.
        try PostgresFixture.psql(fixture.database, "DELETE FROM \"SyncChainNode\" WHERE _id = 1")
        #expect(try await eventually(.seconds(60)) { try Self.localLinks(device, 1) == "-" })
        try device.write { realm in
            if let three = realm.object(ofType: SyncChainNode.self, forPrimaryKey: 3) { realm.delete(three) }
        }
        try await device.sync(timeout: .seconds(60))
        let after = try Self.records(device)
        #expect(after.links == ["2 -> 102"])
        #expect(after.indexed)
        await device.close()
    }

    /// Links in embedded objects to a node nobody has are kept by local edits of the object,
    /// of its embedded object and of an element of its embedded list, as top-level links are.
    /// Before, the upload set `tag.node` to null and sent the list without the links.
    @Test func aLocalEditKeepsUnresolvedLinksInEmbeddedObjects() async throws {
        let types: [ObjectBase.Type] = [SyncTaggedNode.self, SyncNodeTag.self, SyncChainNode.self]
        let fixture = try SyncFixture(types: types)
        func tag(_ node: Int?, _ label: String) -> String {
            "jsonb_build_object('node', \(node.map { "jsonb_build_object('$numberLong', '\($0)')" } ?? "'null'::jsonb"), "
                + "'label', '\(label)')"
        }
        try PostgresFixture.psql(fixture.database, """
            INSERT INTO "SyncTaggedNode" (_id, doc) VALUES (1, jsonb_build_object('_id', jsonb_build_object('$numberLong', '1'),
              'tag', \(tag(7, "a")), 'tags', jsonb_build_array(\(tag(7, "b")), \(tag(nil, "c")), \(tag(8, "d"))), 'note', 'x'))
            """)
        let device = try await Device(server: fixture.server, types: types, subscriptions: { subs in
            subs.append(QuerySubscription<SyncTaggedNode>(name: "tagged"))
        })
        try await device.sync(timeout: .seconds(60))
        #expect(try device.run { realm in
            realm.object(ofType: SyncTaggedNode.self, forPrimaryKey: 1).map { node in
                (node.tag?.node == nil ? "-" : "set") + " " + node.tags.map(\.label).joined(separator: ",")
            }
        } == "- b,c,d")

        try device.write { realm in
            guard let node = realm.object(ofType: SyncTaggedNode.self, forPrimaryKey: 1) else { return }
            node.note = "y"
            node.tag?.label = "a2"
            node.tags[0].label = "b2"
        }
        try await device.sync(timeout: .seconds(60))
        func described(_ json: String) -> String {
            "(\(json)->>'label') || ':' || COALESCE(\(json)->'node'->>'$numberLong', \(json)->>'node', '-')"
        }
        let stored = try PostgresFixture.psql(fixture.database, """
            SELECT (doc->>'note') || '|' || \(described("doc->'tag'")) || '|' || (SELECT string_agg(\(described("e")), ','
              ORDER BY n) FROM jsonb_array_elements(doc->'tags') WITH ORDINALITY AS t(e, n))
            FROM "SyncTaggedNode" WHERE _id = 1
            """).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(stored == "y|a2:7|b2:7,c:-,d:8")
        await device.close()
    }

    /// A node created on the device sets a link to it held by an embedded object, as it sets a
    /// top-level one, and a later edit keeps the link. Before, the record went, the link stayed
    /// nil, and the edit uploaded it as null.
    @Test func aLinkInAnEmbeddedObjectIsSetWhenItsTargetIsCreatedOnTheDevice() async throws {
        let types: [ObjectBase.Type] = [SyncTaggedNode.self, SyncNodeTag.self, SyncChainNode.self]
        let fixture = try SyncFixture(types: types)
        try PostgresFixture.psql(fixture.database, """
            INSERT INTO "SyncTaggedNode" (_id, doc) VALUES (1, jsonb_build_object('_id', jsonb_build_object('$numberLong', '1'),
              'tag', jsonb_build_object('node', jsonb_build_object('$numberLong', '7'), 'label', 'a'), 'tags', '[]'::jsonb,
              'note', 'x'))
            """)
        let device = try await Device(server: fixture.server, types: types, subscriptions: { subs in
            subs.append(QuerySubscription<SyncTaggedNode>(name: "tagged"))
            subs.append(QuerySubscription<SyncChainNode>(name: "nodes"))
        })
        try await device.sync(timeout: .seconds(60))
        let linked = { try device.run { $0.object(ofType: SyncTaggedNode.self, forPrimaryKey: 1)?.tag?.node?._id } }
        #expect(try linked() == nil)

        try device.write { realm in realm.add(SyncChainNode(value: ["_id": 7])) }
        #expect(try linked() == 7)
        try device.write { realm in realm.object(ofType: SyncTaggedNode.self, forPrimaryKey: 1)?.note = "y" }
        try await device.sync(timeout: .seconds(60))
        let stored = try PostgresFixture.psql(fixture.database, """
            SELECT (doc->>'note') || '|' || COALESCE(doc->'tag'->'node'->>'$numberLong', doc->'tag'->>'node', '-')
            FROM "SyncTaggedNode" WHERE _id = 1
            """).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(stored == "y|7")
        await device.close()
    }

    /// `removeAll()` removes a list's unresolved elements too (Realm's clear removes them, though
    /// the list hides them), also from a list that shows none; removing a shown element keeps
    /// them, as in Realm, and so does `create(_:value:update: .modified)` with a new list (it
    /// sets the list by difference, as realm-core's `List::assign` does). Before, the upload put
    /// them back after a clear, so the server kept them and the clear was lost; a list showing
    /// no element uploaded nothing at all.
    @Test func removeAllRemovesTheUnresolvedElementsOfAList() async throws {
        let fixture = try SyncFixture(types: [SyncChainNode.self])
        try Self.insert(fixture.database, [(1, nil, [2, 7, 8]), (2, nil, []), (3, nil, [7]), (4, nil, [2, 7]),
                                           (5, nil, [2, 7])])
        let device = try await Self.device(fixture.server)
        try await device.sync(timeout: .seconds(60))
        #expect(try Self.localLinks(device, 1) == "- 2")
        #expect(try Self.localLinks(device, 3) == "- ")

        try device.write { realm in
            let node = { (id: Int) in realm.object(ofType: SyncChainNode.self, forPrimaryKey: id) }
            node(1)?.later.removeAll()
            if let two = node(2) { node(1)?.later.append(two) }
            node(3)?.later.removeAll()
            node(4)?.later.remove(at: 0)
            if let two = node(2) { realm.create(SyncChainNode.self, value: ["_id": 5, "later": [two, two]], update: .modified) }
        }
        try await device.sync(timeout: .seconds(60))
        #expect(try Self.serverLinks(fixture.database, 1) == "-|2")
        #expect(try Self.serverLinks(fixture.database, 3) == "-|")
        #expect(try Self.serverLinks(fixture.database, 4) == "-|7")
        #expect(try Self.serverLinks(fixture.database, 5) == "-|2,7,2")
        #expect(try Self.localLinks(device, 1) == "- 2")
        await device.close()
    }

    /// `add(_:update: .all)` of an existing object replaces its list whole: its unresolved
    /// elements go too, as realm-core's assign under `UpdateAll` clears the list first.
    /// `add(_:update: .modified)` sets the list by difference and keeps them, as
    /// `create(_:value:update: .modified)` does (realm-core's diffing assign). Before, `.all`
    /// noted no clear, so the upload put the unresolved element back and the server kept it.
    @Test func addWithUpdateAllReplacesTheUnresolvedElementsOfAListAndModifiedKeepsThem() async throws {
        let fixture = try SyncFixture(types: [SyncChainNode.self])
        try Self.insert(fixture.database, [(1, nil, [2, 7]), (2, nil, []), (3, nil, [2, 7])])
        let device = try await Self.device(fixture.server)
        try await device.sync(timeout: .seconds(60))
        #expect(try Self.localLinks(device, 1) == "- 2")

        try device.write { realm in
            guard let two = realm.object(ofType: SyncChainNode.self, forPrimaryKey: 2) else { return }
            realm.add(SyncChainNode(value: ["_id": 1, "later": [two, two]]), update: .modified)
            realm.add(SyncChainNode(value: ["_id": 3, "later": [two]]), update: .all)
        }
        try await device.sync(timeout: .seconds(60))
        #expect(try Self.serverLinks(fixture.database, 1) == "-|2,7,2")
        #expect(try Self.serverLinks(fixture.database, 3) == "-|2")
        await device.close()
    }

    /// A client reset's recovery keeps the unresolved links of what it recovers. Node 1's list
    /// holds node 7, which the file does not have, when the device appends node 2 offline; by
    /// the reset the server has node 7 too. The recovered list is the local one with 7 where it
    /// was, as Realm's recovery copies the local list, unresolved links included. Before, the
    /// recovery took the list as the device showed it (without 7), and as 7 now resolves, the
    /// upload dropped it: the server lost the list's 7.
    @Test func aClientResetRecoversAListWithItsUnresolvedElements() async throws {
        let fixture = try SyncFixture(types: [SyncChainNode.self])
        try Self.insert(fixture.database, [(1, nil, [2, 7]), (2, nil, [])])
        let device = try await Self.device(fixture.server)
        try await device.sync(timeout: .seconds(60))
        #expect(try Self.localLinks(device, 1) == "- 2")
        try device.session.suspend()
        try Self.appendNodeTwoToNodeOne(device)
        try Self.insert(fixture.database, [(7, nil, [])])
        // The history up to node 7's insert is gone (pruning): the device is behind it and resets.
        try PostgresFixture.psql(fixture.database,
                                 "UPDATE trellis_server_identity SET history_floor = (SELECT max(version) FROM trellis_history)")
        try device.session.resume()
        #expect(try await eventually(.seconds(60)) { try Self.localLinks(device, 7) == "- " })
        try await device.sync(timeout: .seconds(60))
        #expect(fixture.server.log.contains("error 222"))
        #expect(try Self.localLinks(device, 1) == "- 2,7,2")
        #expect(try Self.serverLinks(fixture.database, 1) == "-|2,7,2")
        await device.close()
    }
}
