import Foundation
import Testing
import Trellis
@testable import TrellisSync

/// A top-level object with a set and a map of links to nodes.
final class SyncBagNode: Object {
    @Persisted(primaryKey: true) var _id = 0
    @Persisted var members: MutableSet<SyncChainNode>
    @Persisted var named: Map<String, SyncChainNode?>
    @Persisted var note = ""
}

/// `add(_:update:)`/`create(_:value:update:)` of an existing synced object holding links to a
/// node the file does not have (node 7), as realm-core's `Object::create` sets each property:
/// what is uploaded is what the device now holds, with the unresolved links realm-core keeps.
@Suite(.serialized)
struct UpdatePolicyUnresolvedLinksTests {
    /// The server's bag 1 as `members/named` (members and entries sorted, `-` for null).
    static func serverBag(_ database: String) throws -> String {
        let text = try PostgresFixture.psql(database, "SELECT doc::text FROM \"SyncBagNode\" WHERE _id = 1")
        guard let doc = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return "none" }
        let id = UnresolvedLinksInEmbeddedCollectionsTests.documentId
        let members = (doc["members"] as? [Any] ?? []).map(id).sorted().joined(separator: ",")
        let named = (doc["named"] as? [String: Any] ?? [:]).map { "\($0.key):\(id($0.value))" }.sorted()
        return members + "/" + named.joined(separator: ",")
    }

    /// The device's bag 1, as ``serverBag(_:)`` describes the server's; the entries showing no
    /// node (an unresolved link) are left out.
    static func localBag(_ device: Device) throws -> String {
        try device.run { realm in
            guard let bag = realm.object(ofType: SyncBagNode.self, forPrimaryKey: 1) else { return "none" }
            let members = bag.members.map { String($0._id) }.sorted().joined(separator: ",")
            let named = bag.named.keys.compactMap { key in (bag.named[key] ?? nil).map { "\(key):\($0._id)" } }
            return members + "/" + named.sorted().joined(separator: ",")
        }
    }

    /// Under `.modified` a set only inserts and a map only sets the given keys (realm-core's
    /// `Set::assign`/`Dictionary::assign` with a diffing policy): node 2 and the entries a and b
    /// stay on the device, and with the unresolved 7s on the server. Under `.all` each is
    /// emptied first (7s included). Before, `.modified` emptied them too: the device lost 2 and
    /// b, and the server 2 and b (its 7s came back from the mirror).
    @Test func updateModifiedKeepsTheOldElementsOfASetAndAMapAndAllReplacesThem() async throws {
        let fixture = try SyncFixture(types: [SyncBagNode.self, SyncChainNode.self])
        try UnresolvedLinkTests.insert(fixture.database, [(2, nil, []), (3, nil, [])])
        func long(_ value: Int) -> String { "{\"$numberLong\": \"\(value)\"}" }
        let bag = "{\"_id\": \(long(1)), \"note\": \"x\", \"members\": [\(long(7)), \(long(2))], "
            + "\"named\": {\"a\": \(long(7)), \"b\": \(long(2))}}"
        try PostgresFixture.psql(fixture.database, "INSERT INTO \"SyncBagNode\" (_id, doc) VALUES (1, '\(bag)'::jsonb)")
        let device = try await Device(server: fixture.server, types: [SyncBagNode.self, SyncChainNode.self],
                                      subscriptions: { subs in
                                          subs.append(QuerySubscription<SyncBagNode>(name: "bags"))
                                          subs.append(QuerySubscription<SyncChainNode>(name: "nodes"))
                                      })
        try await device.sync(timeout: .seconds(60))
        let synced = try Self.localBag(device)
        #expect(synced == "2/b:2")

        try device.write { realm in
            let three = realm.object(ofType: SyncChainNode.self, forPrimaryKey: 3) as Any
            realm.add(SyncBagNode(value: ["_id": 1, "members": [three], "named": ["c": three]]), update: .modified)
        }
        let modified = try Self.localBag(device)
        #expect(modified == "2,3/b:2,c:3")
        try await device.sync(timeout: .seconds(60))
        let uploaded = try Self.serverBag(fixture.database)
        #expect(uploaded == "2,3,7/a:7,b:2,c:3")

        try device.write { realm in
            let two = realm.object(ofType: SyncChainNode.self, forPrimaryKey: 2) as Any
            realm.create(SyncBagNode.self, value: ["_id": 1, "members": [two], "named": ["d": two]], update: .modified)
        }
        try await device.sync(timeout: .seconds(60))
        let created = try Self.localBag(device)
        #expect(created == "2,3/b:2,c:3,d:2")
        let createdOnServer = try Self.serverBag(fixture.database)
        #expect(createdOnServer == "2,3,7/a:7,b:2,c:3,d:2")

        try device.write { realm in
            let two = realm.object(ofType: SyncChainNode.self, forPrimaryKey: 2) as Any
            realm.add(SyncBagNode(value: ["_id": 1, "members": [two], "named": ["b": two]]), update: .all)
        }
        try await device.sync(timeout: .seconds(60))
        let replaced = try Self.localBag(device)
        #expect(replaced == "2/b:2")
        let replacedOnServer = try Self.serverBag(fixture.database)
        #expect(replacedOnServer == "2/b:2")
        await device.close()
    }

    /// `.all` sets every property (realm-core's `Object::create` with `UpdateAll`): a nil
    /// to-one link replaces an unresolved one, which is uploaded as null, by `add` and by
    /// `create`. Before, the device showed nil but the server kept node 7.
    @Test func updateAllWithANilLinkReplacesAnUnresolvedLink() async throws {
        let fixture = try SyncFixture(types: [SyncChainNode.self])
        try UnresolvedLinkTests.insert(fixture.database, [(1, 7, []), (2, 7, []), (3, nil, [])])
        let device = try await UnresolvedLinkTests.device(fixture.server)
        try await device.sync(timeout: .seconds(60))
        #expect(try UnresolvedLinkTests.localLinks(device, 1) == "- ")

        try device.write { realm in
            realm.add(SyncChainNode(value: ["_id": 1]), update: .all)
            realm.create(SyncChainNode.self, value: ["_id": 2, "next": NSNull()], update: .all)
        }
        try await device.sync(timeout: .seconds(60))
        let one = try UnresolvedLinkTests.serverLinks(fixture.database, 1)
        let two = try UnresolvedLinkTests.serverLinks(fixture.database, 2)
        #expect(one == "-|")
        #expect(two == "-|")
        await device.close()
    }

    /// `.all` of a list of embedded objects makes new elements (realm-core's `List::assign`
    /// empties the list first; `testAddAndUpdateEmbedded`), and so does it for a single
    /// embedded object: the unresolved links the old ones held are gone with them, even when a
    /// new element equals an old one once they are put back. Before, element pairing put them
    /// back and the server kept every 7.
    @Test func updateAllOfEmbeddedObjectsDropsTheUnresolvedLinksOfTheOldOnes() async throws {
        let (fixture, device) = try await UnresolvedLinksInEmbeddedCollectionsTests.start()
        #expect(try UnresolvedLinksInEmbeddedCollectionsTests.server(fixture.database)
            == "x|2,7/2,7/a:7,b:2|7//;2,7//|b:7,c:-")

        try device.write { realm in
            let two = realm.object(ofType: SyncChainNode.self, forPrimaryKey: 2) as Any
            realm.add(SyncGroupedNode(value: ["_id": 1, "note": "x",
                                              "group": ["nodes": [two], "members": [two], "named": ["b": two], "label": "g"],
                                              "groups": [["label": "h"], ["nodes": [two], "label": "i"]],
                                              "tags": [["label": "b"], ["label": "c"]]]),
                      update: .all)
        }
        try await device.sync(timeout: .seconds(60))
        let local = try UnresolvedLinksInEmbeddedCollectionsTests.local(device)
        let server = try UnresolvedLinksInEmbeddedCollectionsTests.server(fixture.database)
        #expect(local == "x|2/2/b:2|//;2//|b:-,c:-")
        #expect(server == "x|2/2/b:2|//;2//|b:-,c:-")
        await device.close()
    }
}
