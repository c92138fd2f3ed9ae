import Foundation
import Testing
import Trellis
import TrellisSyncProtocol
@testable import TrellisSyncServer
import TrellisTestSupport

/// The fan-out's permission prefilter (``PermissionPrefilter``, issue 39): a session is filed
/// under what its role may read (an owner-only role: the user's id), and is still given every
/// change its device must get. Random roles and documents (fixed seeds) against the rules'
/// own evaluator (``SessionPermissions/readable(_:_:)``) and a model of what a session sends.
struct PermissionPrefilterTests {
    /// Users whose expansions the roles use: an id, custom data and its team.
    static let users: [RuleUser] = {
        var ana = RuleUser(id: "ana")
        ana.customData = ["team": .string("red"), "isAdmin": .bool(false), "level": .int(3)]
        var ben = RuleUser(id: "e\u{301}")  // canonically equal to "é"
        ben.customData = ["team": .array([.string("blue"), .int(2)]), "isAdmin": .bool(true)]
        let cy = RuleUser(id: "3")  // no custom data: its expansions are null
        return [ana, ben, cy]
    }()

    static let paths = ["p0", "p1", "p2", "e.p0"]
    static let expansions = ["\"%%user.id\"", "\"%%user.custom_data.team\"", "\"%%user.custom_data.level\"",
                             "\"%%user.custom_data.missing\""]

    /// A rule operand: an expansion or a value of the documents' pools.
    static func operand(_ random: inout SplitMix64) -> String {
        if random.chance(50) { return random.pick(expansions) }
        return random.pick(random.chance(20) ? RandomDocuments.odd : RandomDocuments.usual)
    }

    /// A random `document_filters` expression (JSON text).
    static func expression(_ random: inout SplitMix64, depth: Int = 0) -> String {
        let path = random.pick(paths)
        switch random.next() % (depth > 1 ? 7 : 10) {
        case 0, 1:
            // An Extended JSON wrapper as the value would read as operators: compared with $eq.
            let value = operand(&random)
            return value.hasPrefix("{\"$") ? "{\"\(path)\": {\"$eq\": \(value)}}" : "{\"\(path)\": \(value)}"
        case 2: return "{\"\(path)\": {\"$in\": [\(operand(&random)), \(operand(&random))]}}"
        case 3: return "{\"\(path)\": {\"$eq\": \(operand(&random))}}"
        case 4: return "{\"\(path)\": {\"\(random.pick(["$ne", "$gt", "$lte", "$nin"]))\": \(operand(&random))}}"
        case 5: return random.pick(["true", "false", "{\"%%user.custom_data.isAdmin\": true}", "{\"\(path)\": {\"$exists\": true}}"])
        case 6: return "{\"\(path)\": {\"$eq\": \(operand(&random))}, \"p3\": {\"$eq\": \(operand(&random))}}"
        default:
            let op = random.pick(["$and", "$or", "$or", "$nor"])
            return "{\"\(op)\": [\(expression(&random, depth: depth + 1)), \(expression(&random, depth: depth + 1))]}"
        }
    }

    static func permissions(read: String, write: String, user: RuleUser) throws -> SessionPermissions {
        let role = try SyncRole(try JSONValue(jsonText: """
            {"name": "r", "apply_when": {}, "document_filters": {"read": \(read), "write": \(write)}, "read": true, "write": true}
            """), at: "test")
        var rules = SyncRules()
        rules.collections["C"] = [role]
        return SessionPermissions(rules: rules, user: user, collections: ["C"])
    }

    static func entry(_ document: JSONValue?, previous: JSONValue?, previousKnown: Bool = true,
                      clientId: String? = "other") -> HistoryEntry {
        HistoryEntry(change: ServerChange(className: "C", primaryKey: .int(1), document: document, serverVersion: 2),
                     previous: previous, previousKnown: previousKnown, clientId: clientId)
    }

    @Test func aDocumentTheRoleMayReadIsNeverFilteredOut() throws {
        var random = SplitMix64(seed: 0x9E2_0039)
        var documents = [JSONValue]()
        for _ in 0..<300 { documents.append(try JSONValue(jsonText: RandomDocuments.make(&random).0)) }
        // Owner-only and a few hand-written roles first, then random ones.
        var filters = [(#"{"p0": "%%user.id"}"#, #"{"p0": "%%user.id"}"#),
                       (#"{"p1": {"$in": ["%%user.id", "rex", 3]}}"#, "false"),
                       (#"{"$or": [{"%%user.custom_data.isAdmin": true}, {"p0": "%%user.id"}]}"#, #"{"p0": "%%user.id"}"#),
                       (#"{"e.p0": "%%user.custom_data.team"}"#, #"{"p2": 3}"#),
                       (#"{"p0": "%%user.custom_data.missing"}"#, "false")]
        while filters.count < 200 {
            // The write filter often repeats the read filter or is false, as in real rules.
            let read = Self.expression(&random)
            filters.append((read, random.chance(33) ? read : random.chance(50) ? "false" : Self.expression(&random)))
        }
        var readable = 0, leftOut = 0, keyed = 0
        var missed = [String]()
        for (read, write) in filters {
            for user in Self.users {
                let permissions = try Self.permissions(read: read, write: write, user: user)
                let prefilter = PermissionPrefilter(permissions, collection: "C")
                if case .keys = prefilter { keyed += 1 }
                for document in documents {
                    if permissions.readable("C", document) != nil {
                        readable += 1
                        if !prefilter.admits(document) { missed.append("\(read) / \(write), user \(user.id): \(document.jsonText)") }
                    } else if !prefilter.admits(document) {
                        leftOut += 1
                    }
                }
            }
        }
        #expect(missed.isEmpty, "\(missed.count) readable documents filtered out: \(missed.prefix(5))")
        #expect(keyed >= 150, "\(keyed) of \(filters.count * Self.users.count) roles keyed")
        #expect(readable > 5_000, "\(readable) readable")
        #expect(leftOut > 20_000, "\(leftOut) left out")
    }

    /// What a session sends for an entry (SyncSessionHandler.changes(for:)): its own writes; a
    /// readable new document it selects; a removal when the new one is readable but not
    /// selected and the previous is unknown, or when the previous was readable and selected.
    static func sends(_ entry: HistoryEntry, clientId: String, query: SyncQuery, permissions: SessionPermissions) -> Bool {
        func selected(_ document: JSONValue?) -> Bool {
            guard let document, let visible = permissions.readable("C", document),
                  let object = visible.foundationObject as? [String: Any] else { return false }
            return query.matches(object)
        }
        if entry.clientId == clientId { return true }
        if let document = entry.change.document, permissions.readable("C", document) != nil, !entry.previousKnown {
            return true
        }
        return selected(entry.change.document) || selected(entry.previous)
    }

    @Test func theIndexWakesEverySessionThatSendsAndLeavesOtherUsersSessionsAlone() throws {
        var random = SplitMix64(seed: 0x9E2_0040)
        let queries = try ["TRUEPREDICATE", "p1 == 'rex'", "p2 IN {1, 2, 3}", "p0 > 1"].map { try SyncQuery.parse($0) }
        let roles = [(#"{"p0": "%%user.id"}"#, #"{"p0": "%%user.id"}"#), ("true", "false"), ("false", "false"),
                     (#"{"p0": {"$in": ["%%user.id", "rex"]}}"#, #"{"p1": "%%user.id"}"#)]
        var index = FanOutIndex()
        var sessions = [UUID: (route: SessionRoute, query: SyncQuery, permissions: SessionPermissions, client: String)]()
        for n in 0..<60 {
            let (read, write) = roles[n % 5 == 0 ? Int(random.next() % UInt64(roles.count)) : 0]
            let permissions = try Self.permissions(read: read, write: write, user: Self.users[n % 3])
            let query = random.pick(queries)
            let client = "c\(n % 9)"
            let route = SessionRoute(clientId: client, queries: ["C": [query]], permissions: permissions)
            let id = UUID()
            sessions[id] = (route, query, permissions, client)
            index.set(id, route)
        }
        for id in sessions.keys.shuffled(using: &random).prefix(10) {
            index.remove(id)
            sessions[id] = nil
        }
        let owners: [JSONValue] = [.string("ana"), .string("é"), .string("3"), .int(3), .string("rex"), .null]
        func document() -> JSONValue? {
            if random.chance(12) { return nil }
            var fields = (try? JSONValue(jsonText: RandomDocuments.make(&random).0))?.objectValue ?? [:]
            if !random.chance(15) { fields["p0"] = random.pick(owners) }
            return .object(fields)
        }
        var sent = 0, woken = 0, possible = 0
        var missed = [String]()
        for _ in 0..<2_000 {
            let entry = Self.entry(document(), previous: random.chance(50) ? nil : document(),
                                   previousKnown: !random.chance(10),
                                   clientId: random.chance(25) ? "c\(random.next() % 9)" : nil)
            var candidates = Set<UUID>()
            index.candidates(for: entry, into: &candidates)
            for (id, session) in sessions {
                let sends = Self.sends(entry, clientId: session.client, query: session.query, permissions: session.permissions)
                if sends {
                    sent += 1
                    if !session.route.mayWant(entry) || !candidates.contains(id) {
                        missed.append("\(session.query.text), client \(session.client): \(entry)")
                    }
                }
            }
            woken += candidates.count
            possible += sessions.count
        }
        #expect(missed.isEmpty, "\(missed.count) changes a session sends were not routed to it: \(missed.prefix(3))")
        #expect(sent > 2_000)
        // Most sessions are owner-only: they are woken for their user's documents only.
        #expect(woken * 2 < possible, "woken \(woken) of \(possible)")
    }

    @Test func anOwnerOnlySessionIsWokenOnlyForItsUsersDocuments() throws {
        let owner = #"{"owner_id": "%%user.id"}"#
        var index = FanOutIndex()
        var ids = [String: [UUID]]()
        for user in ["ana", "ben", "cy"] {
            for k in 0..<3 {
                let permissions = try Self.permissions(read: owner, write: owner, user: RuleUser(id: user))
                let route = SessionRoute(clientId: "\(user)-\(k)", queries: ["C": [try SyncQuery.parse("TRUEPREDICATE")]],
                                         permissions: permissions)
                let id = UUID()
                ids[user, default: []].append(id)
                index.set(id, route)
            }
        }
        func woken(_ entry: HistoryEntry) -> Set<UUID> {
            var candidates = Set<UUID>()
            index.candidates(for: entry, into: &candidates)
            return candidates
        }
        let anas: JSONValue = .object(["owner_id": .string("ana"), "body": .string("x")])
        let bens: JSONValue = .object(["owner_id": .string("ben"), "body": .string("y")])
        // A new note of ana's, an edit, a delete: ana's sessions only.
        #expect(woken(Self.entry(anas, previous: nil, clientId: nil)) == Set(ids["ana"] ?? []))
        #expect(woken(Self.entry(anas, previous: anas, clientId: nil)) == Set(ids["ana"] ?? []))
        #expect(woken(Self.entry(nil, previous: anas, clientId: nil)) == Set(ids["ana"] ?? []))
        // Given from ana to ben: both (ana's devices remove it, ben's get it).
        #expect(woken(Self.entry(bens, previous: anas, clientId: nil)) == Set((ids["ana"] ?? []) + (ids["ben"] ?? [])))
        // Cy's client wrote a note of ben's (refused or not, its own write comes back to it).
        #expect(woken(Self.entry(bens, previous: nil, clientId: "cy-1")) == Set((ids["ben"] ?? []) + [ids["cy"]?[1]].compactMap { $0 }))
        // Pruned history: still only sessions that may read the new document.
        #expect(woken(Self.entry(anas, previous: nil, previousKnown: false, clientId: nil)) == Set(ids["ana"] ?? []))
        // No owner: nobody.
        #expect(woken(Self.entry(.object(["body": .string("z")]), previous: nil, clientId: nil)).isEmpty)
    }
}
