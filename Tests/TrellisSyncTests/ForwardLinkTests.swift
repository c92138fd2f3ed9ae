import Foundation
import Testing
import Trellis
import TrellisSync

/// A node of a chain whose links point across the whole set: downloaded in `_id` order, most
/// of them name an object of a later download frame.
final class SyncChainNode: Object {
    @Persisted(primaryKey: true) var _id = 0
    @Persisted var next: SyncChainNode?
    @Persisted var later: List<SyncChainNode>
}

/// Links whose targets arrive after the object that holds them, in a later download frame
/// (frames hold 500 changes), in a later bootstrap, or in the history: each is set once its
/// target is in the file. Before, only links to objects later in the same frame were set; the
/// others stayed nil (or left out of the list) for good, with no error.
@Suite(.serialized)
struct ForwardLinkTests {
    static let count = 1_200

    /// The `_id` `offset` places after `id`, round the chain (1…count).
    static func around(_ id: Int, _ offset: Int) -> Int { (id - 1 + offset) % count + 1 }
    /// Node `id` links to the node 600 further (a frame or more away, in either direction),
    /// and lists one 550 further, the next one (same frame, mostly) and one 700 further.
    static func expectedNext(_ id: Int) -> Int { around(id, 600) }
    static func expectedLater(_ id: Int) -> [Int] { [around(id, 550), around(id, 1), around(id, 700)] }

    /// The nodes as documents, written with SQL in `_id` order (one transaction: the history
    /// gives its entries out in that order too).
    static func insertNodes(_ database: String, ids: ClosedRange<Int> = 1...count) throws {
        func long(_ expression: String) -> String { "jsonb_build_object('$numberLong', (\(expression))::text)" }
        func around(_ offset: Int) -> String { "(i - 1 + \(offset)) % \(count) + 1" }
        try PostgresFixture.psql(database, """
            INSERT INTO "SyncChainNode" (_id, doc)
            SELECT i, jsonb_build_object('_id', \(long("i")), 'next', \(long(around(600))),
              'later', jsonb_build_array(\(long(around(550))), \(long(around(1))), \(long(around(700)))))
            FROM generate_series(\(ids.lowerBound), \(ids.upperBound)) AS i ORDER BY i;
            """)
    }

    /// The nodes of `device` whose links are not the documents': `id: next later…` for each.
    static func wrongLinks(_ device: Device) throws -> [String] {
        try device.run { realm in
            realm.objects(SyncChainNode.self).sorted(byKeyPath: "_id").compactMap { node in
                let next = node.next?._id, later = Array(node.later.map(\._id))
                if next == expectedNext(node._id) && later == expectedLater(node._id) { return nil }
                return "\(node._id): \(next.map(String.init) ?? "nil") \(later)"
            }
        }
    }

    static func device(_ server: ServerProcess, query: String? = nil) async throws -> Device {
        try await Device(server: server, types: [SyncChainNode.self], subscriptions: { subs in
            if let query {
                subs.append(QuerySubscription<SyncChainNode>(name: "nodes", query: query))
            } else {
                subs.append(QuerySubscription<SyncChainNode>(name: "nodes"))
            }
        })
    }

    /// A bootstrap of 1,200 nodes comes in three frames, in `_id` order: node 1's `next` (601)
    /// and most of its list come in the second frame.
    @Test func linksToObjectsOfALaterBootstrapFrameAreSet() async throws {
        let fixture = try SyncFixture(types: [SyncChainNode.self])
        try Self.insertNodes(fixture.database)
        let device = try await Self.device(fixture.server)
        try await device.sync(timeout: .seconds(120))
        #expect(try device.run { $0.objects(SyncChainNode.self).count } == Self.count)
        let wrong = try Self.wrongLinks(device)
        #expect(wrong.isEmpty, "\(wrong.count) nodes miss links, first: \(wrong.prefix(3))")
        await device.close()
    }

    /// The same nodes written after the device synced reach it through the history, in frames
    /// of 500 entries in the order they were written.
    @Test func linksToObjectsOfALaterHistoryFrameAreSet() async throws {
        let fixture = try SyncFixture(types: [SyncChainNode.self])
        let device = try await Self.device(fixture.server)
        try await device.sync()
        try Self.insertNodes(fixture.database)
        #expect(try await eventually(.seconds(120)) {
            try device.run { $0.objects(SyncChainNode.self).count } == Self.count
        })
        try await device.sync(timeout: .seconds(60))
        let wrong = try Self.wrongLinks(device)
        #expect(wrong.isEmpty, "\(wrong.count) nodes miss links, first: \(wrong.prefix(3))")
        await device.close()
    }

    /// Links to objects outside the subscriptions stay unset (Realm's unresolved links) until a
    /// new subscription brings the targets, a session later: then they are set, also in the
    /// objects the new bootstrap sends unchanged.
    @Test func linksToObjectsOfALaterSubscriptionAreSetWhenTheyArrive() async throws {
        let fixture = try SyncFixture(types: [SyncChainNode.self])
        try Self.insertNodes(fixture.database)
        let device = try await Self.device(fixture.server, query: "_id <= 600")
        try await device.sync(timeout: .seconds(120))
        #expect(try device.run { $0.objects(SyncChainNode.self).count } == 600)
        let first = try device.run { realm in
            realm.object(ofType: SyncChainNode.self, forPrimaryKey: 1).map { ($0.next?._id, Array($0.later.map(\._id))) }
        }
        #expect(first?.0 == nil, "601 is not subscribed")
        #expect(first?.1 == [551, 2], "701 is not subscribed; 551 came in the second frame")
        let subscriptions = try device.run { $0.subscriptions }
        try await withTimeout(.seconds(120)) {
            try await subscriptions.update {
                $0.removeAll()
                $0.append(QuerySubscription<SyncChainNode>(name: "all"))
            }
        }
        try await device.sync(timeout: .seconds(60))
        #expect(try device.run { $0.objects(SyncChainNode.self).count } == Self.count)
        let wrong = try Self.wrongLinks(device)
        #expect(wrong.isEmpty, "\(wrong.count) nodes miss links, first: \(wrong.prefix(3))")
        await device.close()
    }
}
