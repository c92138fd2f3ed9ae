import Foundation
import Testing
import TrellisSyncProtocol
import TrellisTestSupport

/// Two clients with clocks skewed up to ±1 h edit the same objects offline, round after round,
/// and come back in a random order: the server's merge (``DocumentMerge``) must reach the
/// state a model of the rules gives, which does not depend on the order of arrival (issue 36
/// item 10). Seeded; `TRELLIS_CONVERGENCE_ROUNDS` runs more rounds (default 1,500).
struct ConvergenceModelTests {
    /// One edit as the model sees it: which path, which value, at which timestamp.
    struct Write {
        var path: String
        var value: JSONValue
        var stamp: String
        var isDefault: Bool
    }

    static let scalars = ["title", "priority", "owner"]
    static let embeddedFields = ["city", "street"]
    static let mapKeys = ["k1", "k2", "k3"]
    static let defaults: [String: JSONValue] = ["title": .string(""), "priority": .int(0), "owner": .string("")]

    /// The model: per scalar, the newest explicit write, else the newest default; the embedded
    /// object is its newest whole replacement with each field written later than it applied;
    /// each map key is its newest write.
    static func model(_ writes: [Write]) -> [String: JSONValue] {
        func newest(_ candidates: [Write]) -> Write? {
            candidates.max { ($0.isDefault ? 0 : 1, $0.stamp) < ($1.isDefault ? 0 : 1, $1.stamp) }
        }
        var document = [String: JSONValue]()
        for name in scalars { if let write = newest(writes.filter { $0.path == name }) { document[name] = write.value } }
        if let whole = newest(writes.filter { $0.path == "address" }), case .object(var fields) = whole.value {
            for field in embeddedFields {
                if let write = newest(writes.filter { $0.path == "address." + field && $0.stamp > whole.stamp }) {
                    fields[field] = write.value
                }
            }
            document["address"] = .object(fields)
        }
        var entries = [String: JSONValue]()
        for key in mapKeys {
            if let write = newest(writes.filter { $0.path == "scores." + key }), write.value != .null {
                entries[key] = write.value
            }
        }
        document["scores"] = .object(entries)
        return document
    }

    /// A client: its clock (skewed), its copy of the object, and its changes not yet uploaded.
    struct Client {
        var clock: HybridLogicalClock
        var skew: TimeInterval
        var copy: [String: JSONValue]
        var outbox: [SyncObjectChange] = []
    }

    @Test func twoClientsWithSkewedClocksConvergeToTheModelWhateverTheOrderOfArrival() {
        let rounds = Int(ProcessInfo.processInfo.environment["TRELLIS_CONVERGENCE_ROUNDS"] ?? "") ?? 1_500
        var random = SplitMix64(seed: 0x5EED_2026)
        var now = Date(timeIntervalSince1970: 1_800_000_000)
        var mismatches = 0
        for round in 0..<rounds {
            // A new object each round: both clients insert the same primary key offline.
            var clients = [
                Client(clock: HybridLogicalClock(clientId: "a"), skew: Double(Int.random(in: -3600...3600, using: &random)),
                       copy: [:]),
                Client(clock: HybridLogicalClock(clientId: "b"), skew: Double(Int.random(in: -3600...3600, using: &random)),
                       copy: [:]),
            ]
            var writes = [Write]()
            var server: DocumentMerge.Stored?
            for index in clients.indices {
                now += Double(Int.random(in: 1...50, using: &random)) / 1000
                let stamp = clients[index].clock.tick(now: now + clients[index].skew).description
                var fields = [FieldChange](), defaults = [String]()
                for name in Self.scalars {
                    let explicit = Bool.random(using: &random)
                    let value: JSONValue = explicit
                        ? (name == "priority" ? .int(Int64(Int.random(in: 1...9, using: &random))) : .string("\(name)-\(round)-\(index)"))
                        : Self.defaults[name] ?? .null
                    fields.append(.set(name: name, value: value))
                    if !explicit { defaults.append(name) }
                    writes.append(Write(path: name, value: value, stamp: stamp, isDefault: !explicit))
                }
                let address = JSONValue.object(["city": .string("c\(index)"), "street": .string("s\(index)")])
                fields.append(.set(name: "address", value: address))
                writes.append(Write(path: "address", value: address, stamp: stamp, isDefault: false))
                // An empty map is the model's default, as the client marks it.
                fields.append(.set(name: "scores", value: .object([:])))
                defaults.append("scores")
                clients[index].outbox.append(SyncObjectChange(className: "T", primaryKey: .int(Int64(round)), kind: .insert,
                                                              timestamp: stamp, fields: fields, defaultFields: defaults))
            }
            // Offline edits on both sides, then both upload in a random order, then download.
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                for index in clients.indices {
                    for _ in 0..<Int.random(in: 1...3, using: &random) {
                        now += Double(Int.random(in: 0...20, using: &random)) / 1000
                        let stamp = clients[index].clock.tick(now: now + clients[index].skew).description
                        let field: FieldChange
                        let write: Write
                        switch Int.random(in: 0..<10, using: &random) {
                        case 0..<4:
                            let name = Self.scalars.randomElement(using: &random) ?? "title"
                            let value: JSONValue = .string("\(name)-\(round)-\(index)-\(stamp.prefix(22))")
                            field = .set(name: name, value: value)
                            write = Write(path: name, value: value, stamp: stamp, isDefault: false)
                        case 4..<7:
                            let name = "address." + (Self.embeddedFields.randomElement(using: &random) ?? "city")
                            let value: JSONValue = .string("\(name)-\(index)-\(stamp.prefix(22))")
                            field = .set(name: name, value: value)
                            write = Write(path: name, value: value, stamp: stamp, isDefault: false)
                        case 7:
                            let value = JSONValue.object(["city": .string("new-\(index)-\(stamp.prefix(22))"),
                                                          "street": .string("new street")])
                            field = .set(name: "address", value: value)
                            write = Write(path: "address", value: value, stamp: stamp, isDefault: false)
                        default:
                            let key = Self.mapKeys.randomElement(using: &random) ?? "k1"
                            let value: JSONValue? = Bool.random(using: &random) ? .int(Int64(Int.random(in: 0...99, using: &random))) : nil
                            field = .map(name: "scores", values: [key: value])
                            write = Write(path: "scores." + key, value: value ?? .null, stamp: stamp, isDefault: false)
                        }
                        writes.append(write)
                        clients[index].outbox.append(SyncObjectChange(className: "T", primaryKey: .int(Int64(round)),
                                                                      kind: .update, timestamp: stamp, fields: [field]))
                    }
                }
                for index in (Bool.random(using: &random) ? [0, 1] : [1, 0]) {
                    for change in clients[index].outbox {
                        server = DocumentMerge.apply(change, to: server, tombstone: nil)
                    }
                    clients[index].outbox = []
                }
                for index in clients.indices {
                    clients[index].copy = server?.document ?? [:]
                    for stamp in (server?.timestamps ?? [:]).values { clients[index].clock.observe(stamp) }
                }
            }
            let expected = Self.model(writes)
            if clients[0].copy != expected || clients[1].copy != clients[0].copy {
                mismatches += 1
                if mismatches <= 3 {
                    let server = JSONValue.object(clients[0].copy).jsonText, model = JSONValue.object(expected).jsonText
                    Issue.record("round \(round): server \(server) model \(model)")
                }
            }
        }
        #expect(mismatches == 0)
    }
}
