import Foundation
import Synchronization
import Testing
import Trellis
import TrellisSync
import TrellisSyncProtocol
import TrellisTestSupport

/// The server fans each history entry out only to the sessions that can want it (issue 39,
/// docs/SYNC.md "Change notification"): sessions with mixed subscriptions (prefiltered
/// equalities, `IN`, `OR`, conditions it cannot prefilter, everything) and an owner-only rule
/// each end with exactly the notes their role and queries select, never get another user's
/// note, and get no frame entry for a note they never held.
@Suite(.serialized)
struct FanOutTests {
    static let rules = #"""
        {"rules": [
          {"collection": "SyncMappedNote", "roles": [{"name": "owner", "apply_when": {},
            "document_filters": {"read": {"owner_id": "%%user.id"}, "write": {"owner_id": "%%user.id"}},
            "read": true, "write": true}]}],
         "default_rule": {"roles": [{"name": "reader", "apply_when": {},
           "document_filters": {"read": true, "write": false}, "read": true, "write": false}]}}
        """#

    /// Shared by the sessions' tasks: how many finished their bootstrap, and whether the SQL
    /// writes are done.
    final class Flags: Sendable {
        let ready = Atomic<Int>(0)
        let written = Atomic<Bool>(false)
    }

    struct Note: Equatable {
        var owner: String
        var body: String
    }

    /// Subscription queries (server field names) and what each selects.
    static let queries: [(text: String, selects: @Sendable (Note) -> Bool)] = [
        ("TRUEPREDICATE", { _ in true }),
        ("body == 'a'", { $0.body == "a" }),
        ("body IN {'a', 'b'}", { ["a", "b"].contains($0.body) }),
        ("body == 'b' OR body == 'c'", { ["b", "c"].contains($0.body) }),
        ("owner_id == 'ana' AND body == 'c'", { $0.owner == "ana" && $0.body == "c" }),
        ("body BEGINSWITH 'c'", { $0.body.hasPrefix("c") }),
        ("body != 'a'", { $0.body != "a" }),
    ]

    static func note(_ document: JSONValue?) -> Note? {
        guard let owner = document?["owner_id"]?.stringValue, let body = document?["body"]?.stringValue else { return nil }
        return Note(owner: owner, body: body)
    }

    @Test func sessionsWithMixedSubscriptionsGetExactlyTheirNotesAndNoFrameForNotesTheyNeverHeld() async throws {
        let rulesFile = FileManager.default.temporaryDirectory.appendingPathComponent("rules-\(UUID().uuidString).json")
        try Self.rules.write(to: rulesFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: rulesFile) }
        let fixture = try SyncFixture(types: [SyncMappedNote.self, SyncMappedPlace.self],
                                      serverArguments: ["--rules", rulesFile.path])
        var random = SplitMix64(seed: 3_939)
        let users = ["ana", "ben", "cy"]
        let bodies = ["a", "b", "c", "ca", "d"]
        let ids = (0..<10).map { _ in ObjectId.generate().stringValue }
        func sqlDocument(_ id: String, _ note: Note) -> String {
            #"'{"_id": {"$oid": "\#(id)"}, "owner_id": "\#(note.owner)", "body": "\#(note.body)"}'"#
        }
        // A few notes before the sessions start (bootstrap path).
        for id in ids.prefix(4) {
            let note = Note(owner: users.randomElement(using: &random) ?? "ana",
                            body: bodies.randomElement(using: &random) ?? "a")
            _ = try PostgresFixture.psql(fixture.database,
                                         "INSERT INTO \"SyncMappedNote\" (_id, doc) VALUES ('\(id)', \(sqlDocument(id, note)))")
        }
        // Session 0 (ana, `body == 'a'`) also uploads a note its own query does not select.
        var sessions = [(user: String, queries: [Int])]()
        sessions.append(("ana", [1]))
        for index in 1..<12 {
            let count = Int.random(in: 1...2, using: &random)
            sessions.append((users[index % 3], (0..<count).map { _ in Int.random(in: 0..<Self.queries.count, using: &random) }))
        }
        var statements = [String]()
        for _ in 0..<40 {
            let id = ids.randomElement(using: &random) ?? ids[0]
            if Int.random(in: 0..<5, using: &random) == 0 {
                statements.append("DELETE FROM \"SyncMappedNote\" WHERE _id = '\(id)';")
            } else {
                let note = Note(owner: users.randomElement(using: &random) ?? "ana",
                                body: bodies.randomElement(using: &random) ?? "a")
                statements.append("INSERT INTO \"SyncMappedNote\" (_id, doc) VALUES ('\(id)', \(sqlDocument(id, note))) "
                    + "ON CONFLICT (_id) DO UPDATE SET doc = EXCLUDED.doc;")
            }
        }
        let ownNote = ObjectId.generate().stringValue
        let flags = Flags()
        let port = fixture.server.port
        let baseURL = fixture.server.baseURL
        var tokens = [String]()
        for session in sessions {
            let user = try await testApp(baseURL).login(credentials: .jwt(token: try await TestTokens.login(session.user)))
            tokens.append(user.accessToken ?? "")
        }
        let received = try await withThrowingTaskGroup(of: (Int, [ServerChange]).self) { group in
            for (index, session) in sessions.enumerated() {
                let token = tokens[index]
                let subscriptions = SubscriptionSet(version: 1, subscriptions: session.queries.enumerated().map {
                    .init(name: "q\($0.offset)", className: "SyncMappedNote", query: Self.queries[$0.element].text)
                })
                group.addTask {
                    let changes = try await RawSyncClient.connect(port: port, timeout: .seconds(120)) { channel in
                        try await channel.send(RawSyncClient.hello(token: token, clientId: "fan-\(index)",
                                                                   subscriptions: subscriptions))
                        var changes = [ServerChange]()
                        var marked = false
                        while let frame = try await channel.next() {
                            switch frame {
                            case .download(let download):
                                changes += download.changes
                                guard download.completesSubscriptionVersion == 1 else { continue }
                                if index == 0 {
                                    let key = JSONValue.object(["$oid": .string(ownNote)])
                                    try await channel.send(.upload(.init(uploadId: 1, changes: [
                                        SyncObjectChange(className: "SyncMappedNote", primaryKey: key, kind: .insert,
                                                         timestamp: "0000000000000001-00000-fan0",
                                                         fields: [.set(name: "_id", value: key),
                                                                  .set(name: "owner_id", value: .string("ana")),
                                                                  .set(name: "body", value: .string("z"))]),
                                    ])))
                                    for case .download(let more) in try await channel.collect(until: { frame in
                                        if case .ack = frame { true } else { false }
                                    }) {
                                        changes += more.changes
                                    }
                                }
                                flags.ready.add(1, ordering: .relaxed)
                                while !flags.written.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(20)) }
                                if !marked {
                                    marked = true
                                    try await channel.send(.mark(.init(id: 2)))
                                }
                            case .mark:
                                try await channel.close()
                                return changes
                            case .error(let error):
                                Issue.record("session \(index): server error \(error.code): \(error.message)")
                                return changes
                            default: continue
                            }
                        }
                        return changes
                    }
                    return (index, changes)
                }
            }
            while flags.ready.load(ordering: .relaxed) < sessions.count { try await Task.sleep(for: .milliseconds(20)) }
            let script = FileManager.default.temporaryDirectory.appendingPathComponent("fan-\(UUID().uuidString).sql")
            try statements.joined(separator: "\n").write(to: script, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: script) }
            // One statement a transaction: one history entry each.
            _ = try runTool("/usr/bin/env", ["psql", fixture.database, "-v", "ON_ERROR_STOP=1", "-q", "-f", script.path])
            flags.written.store(true, ordering: .relaxed)
            var all = [Int: [ServerChange]]()
            for try await (index, changes) in group { all[index] = changes }
            return all
        }
        var final = [String: Note]()
        let rows = try PostgresFixture.psql(fixture.database, "SELECT _id, doc::text FROM \"SyncMappedNote\"")
        for line in rows.split(separator: "\n") {
            let parts = line.split(separator: "|", maxSplits: 1)
            guard parts.count == 2, let note = Self.note(try JSONValue(jsonText: String(parts[1]))) else { continue }
            final[String(parts[0])] = note
        }
        #expect(final[ownNote] == Note(owner: "ana", body: "z"))
        for (index, session) in sessions.enumerated() {
            var held = [String: Note]()
            var needless = [String]()
            for change in received[index] ?? [] {
                guard let id = change.primaryKey["$oid"]?.stringValue else { continue }
                if let document = change.document {
                    let note = Self.note(document)
                    #expect(note?.owner == session.user, "session \(index) (\(session.user)) got another user's note \(id)")
                    held[id] = note
                } else {
                    if held[id] == nil && !(index == 0 && id == ownNote) { needless.append(id) }
                    held[id] = nil
                }
            }
            let expected = final.filter { _, note in
                note.owner == session.user && session.queries.contains { Self.queries[$0].selects(note) }
            }
            #expect(held == expected, "session \(index) (\(session.user), \(session.queries.map { Self.queries[$0].text }))")
            #expect(needless.isEmpty, "session \(index) got removals of notes it never held: \(needless)")
        }
        // Session 0's own write outside its query came back as a removal.
        let own = (received[0] ?? []).filter { $0.primaryKey["$oid"]?.stringValue == ownNote }
        #expect(own.count == 1 && own.first?.document == nil)
    }
}
