import Foundation
import Testing
import Trellis
@testable import TrellisSync

/// An embedded object holding collections of links to nodes.
final class SyncNodeGroup: EmbeddedObject {
    @Persisted var nodes: List<SyncChainNode>
    @Persisted var members: MutableSet<SyncChainNode>
    @Persisted var named: Map<String, SyncChainNode?>
    @Persisted var label = ""
}

/// A top-level object holding groups and tags (embedded objects with links).
final class SyncGroupedNode: Object {
    @Persisted(primaryKey: true) var _id = 0
    @Persisted var group: SyncNodeGroup?
    @Persisted var groups: List<SyncNodeGroup>
    @Persisted var tags: List<SyncNodeTag>
    @Persisted var note = ""
}

/// Unresolved links (to a node the file does not have) held by the elements of an embedded list
/// and by the collections of embedded objects, after UnresolvedLinkTests: the node is created on
/// the device, and the app empties such a collection.
@Suite(.serialized)
struct UnresolvedLinksInEmbeddedCollectionsTests {
    static let types: [ObjectBase.Type] = [SyncGroupedNode.self, SyncNodeGroup.self, SyncNodeTag.self, SyncChainNode.self]

    /// Node 1 as Extended JSON text: `group` (nodes [2, 7], members {7, 2}, named a: 7, b: 2),
    /// `groups` (one with nodes [7], one with nodes [2, 7]) and `tags` (b: 7, c: none).
    static let groupedNode = """
        {"_id": {"$numberLong": "1"}, "note": "x",
         "group": {"nodes": [{"$numberLong": "2"}, {"$numberLong": "7"}], "members": [{"$numberLong": "7"},
           {"$numberLong": "2"}], "named": {"a": {"$numberLong": "7"}, "b": {"$numberLong": "2"}}, "label": "g"},
         "groups": [{"nodes": [{"$numberLong": "7"}], "members": [], "named": {}, "label": "h"},
           {"nodes": [{"$numberLong": "2"}, {"$numberLong": "7"}], "members": [], "named": {}, "label": "i"}],
         "tags": [{"node": {"$numberLong": "7"}, "label": "b"}, {"node": null, "label": "c"}]}
        """

    /// The server with node 1 and node 2 (a chain node); a device that synced them.
    static func start() async throws -> (SyncFixture, Device) {
        let fixture = try SyncFixture(types: types)
        try PostgresFixture.psql(fixture.database, "INSERT INTO \"SyncGroupedNode\" (_id, doc) VALUES (1, '\(groupedNode)'::jsonb)")
        try UnresolvedLinkTests.insert(fixture.database, [(2, nil, [])])
        let device = try await Device(server: fixture.server, types: types, subscriptions: { subs in
            subs.append(QuerySubscription<SyncGroupedNode>(name: "grouped"))
            subs.append(QuerySubscription<SyncChainNode>(name: "nodes"))
        })
        try await device.sync(timeout: .seconds(60))
        return (fixture, device)
    }

    /// A group as `nodes/members/named` (members and names sorted, `-` for a nil value).
    static func describe(nodes: [String], members: [String], named: [(String, String)]) -> String {
        nodes.joined(separator: ",") + "/" + members.sorted().joined(separator: ",") + "/"
            + named.map { "\($0.0):\($0.1)" }.sorted().joined(separator: ",")
    }

    /// The device's node 1: `note|group|groups;…|tags,…`, tags as `label:node`.
    static func local(_ device: Device) throws -> String {
        try device.run { realm in
            guard let node = realm.object(ofType: SyncGroupedNode.self, forPrimaryKey: 1) else { return "none" }
            let id = { (node: SyncChainNode?) in node.map { String($0._id) } ?? "-" }
            let described = { (group: SyncNodeGroup) in
                Self.describe(nodes: group.nodes.map { id($0) }, members: group.members.map { id($0) },
                         named: group.named.keys.map { ($0, id(group.named[$0] ?? nil)) })
            }
            return [node.note, node.group.map(described) ?? "none", node.groups.map(described).joined(separator: ";"),
                    node.tags.map { "\($0.label):\(id($0.node))" }.joined(separator: ",")].joined(separator: "|")
        }
    }

    /// A link's value in a server document (Extended JSON) as the node's `_id`, `-` for null.
    static func documentId(_ value: Any?) -> String {
        if let wrapped = value as? [String: Any], let text = wrapped["$numberLong"] ?? wrapped["$numberInt"] {
            return "\(text)"
        }
        if let number = value as? NSNumber { return number.stringValue }
        return "-"
    }

    /// The server's node 1, as ``local(_:)`` describes the device's.
    static func server(_ database: String) throws -> String {
        let text = try PostgresFixture.psql(database, "SELECT doc::text FROM \"SyncGroupedNode\" WHERE _id = 1")
        guard let doc = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return "none" }
        let id = documentId
        func group(_ value: Any?) -> String {
            guard let group = value as? [String: Any] else { return "none" }
            return Self.describe(nodes: (group["nodes"] as? [Any] ?? []).map(id), members: (group["members"] as? [Any] ?? []).map(id),
                            named: (group["named"] as? [String: Any] ?? [:]).map { ($0.key, id($0.value)) })
        }
        let tags = (doc["tags"] as? [[String: Any]] ?? []).map { "\($0["label"] ?? ""):\(id($0["node"]))" }
        return ["\(doc["note"] ?? "")", group(doc["group"]), (doc["groups"] as? [Any] ?? []).map(group).joined(separator: ";"),
                tags.joined(separator: ",")].joined(separator: "|")
    }

    /// Node 7, created on the device, sets every link to it that node 1's embedded objects hold:
    /// in a group's list, set and map, in an element of the list of groups, and in an element
    /// of the list of tags, as Realm resolves every link naming a created object's primary key.
    /// A later edit of node 1 keeps them. Before, those links stayed unset and the edit uploaded
    /// their absence: the server lost each 7.
    @Test func linksInEmbeddedListsAndCollectionsAreSetWhenTheirTargetIsCreatedOnTheDevice() async throws {
        let (fixture, device) = try await Self.start()
        let synced = "x|2,7/2,7/a:7,b:2|7//;2,7//|b:7,c:-"
        #expect(try Self.server(fixture.database) == synced)
        #expect(try device.run { realm in
            realm.object(ofType: SyncGroupedNode.self, forPrimaryKey: 1).map { node in
                (node.group?.nodes.map { String($0._id) } ?? []) + node.groups.map { String($0.nodes.count) }
            }
        } == ["2", "0", "1"])

        try device.write { realm in realm.add(SyncChainNode(value: ["_id": 7])) }
        #expect(try Self.local(device) == synced)
        try device.write { realm in realm.object(ofType: SyncGroupedNode.self, forPrimaryKey: 1)?.note = "y" }
        try await device.sync(timeout: .seconds(60))
        #expect(try Self.server(fixture.database) == "y|2,7/2,7/a:7,b:2|7//;2,7//|b:7,c:-")
        #expect(try Self.local(device) == "y|2,7/2,7/a:7,b:2|7//;2,7//|b:7,c:-")
        await device.close()
    }

    /// `removeAll()` on a list, set or map of links inside an embedded object removes its
    /// unresolved elements too, as Realm's clear does; also on a list that shows none (its own
    /// write, nothing else changed). The collections left alone keep theirs. Before, the upload
    /// put them back (the clear was lost), and a clear of a list showing nothing uploaded nothing.
    @Test func removeAllInsideAnEmbeddedObjectRemovesItsUnresolvedElements() async throws {
        let (fixture, device) = try await Self.start()
        #expect(try Self.server(fixture.database) == "x|2,7/2,7/a:7,b:2|7//;2,7//|b:7,c:-")

        try device.write { realm in realm.object(ofType: SyncGroupedNode.self, forPrimaryKey: 1)?.groups[0].nodes.removeAll() }
        try await device.sync(timeout: .seconds(60))
        #expect(try Self.server(fixture.database) == "x|2,7/2,7/a:7,b:2|//;2,7//|b:7,c:-")

        try device.write { realm in
            guard let node = realm.object(ofType: SyncGroupedNode.self, forPrimaryKey: 1), let group = node.group else { return }
            group.nodes.removeAll()
            group.members.removeAll()
            group.named.removeAll()
            node.tags[0].label = "b2"
            node.groups[1].label = "i2"
        }
        try await device.sync(timeout: .seconds(60))
        #expect(try Self.server(fixture.database) == "x|//|//;2,7//|b2:7,c:-")
        await device.close()
    }
}
