import Foundation
import Testing
import Trellis
import TrellisSyncProtocol
@testable import TrellisSyncServer
import TrellisTestSupport

/// The fan-out's prefilters (``SubscriptionPrefilter``, ``SessionRoute``) against the Swift
/// evaluator: random predicates and documents (fixed seed). A document a query selects is
/// never kept from its session (as the new or the previous document of a change), and the
/// prefilter does leave out documents (it is not "everything passes").
struct SubscriptionPrefilterTests {
    static func entry(_ document: JSONValue?, previous: JSONValue? = nil) -> HistoryEntry {
        HistoryEntry(change: ServerChange(className: "C", primaryKey: .int(1), document: document, serverVersion: 2),
                     previous: previous, previousKnown: true, clientId: "other")
    }

    @Test func aDocumentAQuerySelectsAlwaysReachesItsSession() throws {
        var random = SplitMix64(seed: 0xFA9_0039)
        var documents = [JSONValue]()
        for _ in 0..<300 {
            documents.append(try JSONValue(jsonText: RandomDocuments.make(&random).0))
        }
        // Equalities and IN lists (what the prefilter keys), mixed with the general predicates.
        let equalities = ["p0 == 3", "p0 == 3.0", "p1 == 'rex'", "p1 == 'e\u{301}'", "p2 IN {1, 2, 'a'}",
                          "p0 == 2 OR p0 == 'ab'", "p3 == oid(65a1b2c3d4e5f60718293a4b) AND p1 != 'a'",
                          "p0 == true", "p2 == 9007199254740993", "p1 == 2.5", "(p0 == 1 OR p0 == 10) AND p2 > 1",
                          "p0 == 1 OR p1 == 1", "ANY p1 == 'rex'", "p1 ==[c] 'rex'", "NOT p0 == 3"]
        var queries = [SyncQuery]()
        for text in equalities { queries.append(try SyncQuery.parse(text)) }
        while queries.count < 400 {
            let (format, arguments) = RandomPredicates.make(&random)
            guard let made = try? SyncQuery.parse(format, arguments: arguments), made.unsupportedReason == nil else { continue }
            queries.append(try SyncQuery.parse(made.text))
        }
        var selected = 0, leftOut = 0, prefiltered = 0
        var missed = [String]()
        for query in queries {
            let route = SessionRoute(clientId: "me", queries: ["C": [query]])
            if SubscriptionPrefilter(query) != nil { prefiltered += 1 }
            for document in documents {
                guard let object = document.foundationObject as? [String: Any] else { continue }
                let matches = query.matches(object)
                let asNew = route.mayWant(Self.entry(document))
                let asPrevious = route.mayWant(Self.entry(nil, previous: document))
                if matches {
                    selected += 1
                    if !asNew || !asPrevious { missed.append("\(query.text) on \(document.jsonText)") }
                } else if !asNew {
                    leftOut += 1
                }
            }
        }
        #expect(missed.isEmpty, "\(missed.count) selected documents kept from their session: \(missed.prefix(5))")
        #expect(prefiltered >= 20)
        #expect(selected > 1_000)
        #expect(leftOut > 1_000)
    }

    @Test func aSessionGetsItsOwnWritesAndEveryChangeWhenTheHistoryWasPruned() throws {
        let route = SessionRoute(clientId: "me", queries: ["C": [try SyncQuery.parse("p0 == 1")]])
        let other: JSONValue = .object(["p0": .int(2)])
        #expect(!route.mayWant(Self.entry(other)))
        var own = Self.entry(other)
        own.clientId = "me"
        #expect(route.mayWant(own))
        var pruned = Self.entry(other)
        pruned.previousKnown = false
        #expect(route.mayWant(pruned))
        var elsewhere = Self.entry(other)
        elsewhere.change.className = "D"
        elsewhere.clientId = "me"
        #expect(!route.mayWant(elsewhere))
    }

    @Test func theIndexNamesEverySessionTheRouteWants() throws {
        var random = SplitMix64(seed: 0xFA9_0040)
        let texts = ["p0 == 1", "p0 == 2", "p0 IN {1, 3}", "p1 == 'a'", "TRUEPREDICATE", "p0 > 1", "p0 == 1 OR p0 == 'a'"]
        var index = FanOutIndex()
        var routes = [UUID: SessionRoute]()
        for n in 0..<40 {
            let count = Int(random.next() % 2) + 1
            let queries = try (0..<count).map { _ in try SyncQuery.parse(texts[Int(random.next() % UInt64(texts.count))]) }
            let route = SessionRoute(clientId: "c\(n % 7)", queries: [(n % 3 == 0 ? "D" : "C"): queries])
            let id = UUID()
            routes[id] = route
            index.set(id, route)
        }
        // Some leave, one changes its subscriptions.
        for id in routes.keys.shuffled(using: &random).prefix(10) {
            index.remove(id)
            routes[id] = nil
        }
        if let id = routes.keys.first {
            let route = SessionRoute(clientId: "c1", queries: ["C": [try SyncQuery.parse("p1 == 'b'")]])
            routes[id] = route
            index.set(id, route)
        }
        #expect(index.count == routes.count)
        for _ in 0..<300 {
            let new = try JSONValue(jsonText: RandomDocuments.make(&random).0)
            let previous = random.next() % 3 == 0 ? nil : try JSONValue(jsonText: RandomDocuments.make(&random).0)
            var entry = Self.entry(new, previous: previous)
            entry.change.className = random.next() % 3 == 0 ? "D" : "C"
            entry.clientId = random.next() % 4 == 0 ? "c\(random.next() % 7)" : nil
            entry.previousKnown = random.next() % 10 != 0
            var candidates = Set<UUID>()
            index.candidates(for: entry, into: &candidates)
            let wanted = Set(routes.filter { $0.value.mayWant(entry) }.keys)
            #expect(wanted.isSubset(of: candidates))
            #expect(candidates.isSubset(of: Set(routes.keys)))
        }
    }
}
