import Foundation
import Testing
import TrellisSyncProtocol
import TrellisTestSupport

/// The hand-written JSON of uploads, downloads and documents (issue 39, throughput) against
/// Foundation's `Codable` coders, on random values with a fixed seed: the same JSON either
/// way, so a peer using either coder understands the other.
struct SyncCodingTests {
    static let texts = ["", "a", "Oslo", "quote \" and \\ backslash", "slash / and tab\t", "line\nbreak\r",
                        "ctrl \u{01}\u{1F}", "émoji 🐕 ø", "日本", "$oid", "_0", "Z", "aB", "ab", "10", "9"]

    static func value(_ random: inout SplitMix64, depth: Int = 0) -> JSONValue {
        switch Int.random(in: 0..<(depth > 3 ? 6 : 8), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2:
            let choices: [Int64] = [0, 1, -1, 42, Int64.max, Int64.min, 9_007_199_254_740_993]
            return .int(Bool.random(using: &random) ? choices.randomElement(using: &random) ?? 0
                : Int64.random(in: -1_000_000...1_000_000, using: &random))
        case 3:
            let choices = [0.5, -2.25, 1e300, 1.5e-10, 3.141592653589793, 0.1, 123456.789]
            return .double(choices.randomElement(using: &random) ?? 0.5)
        case 4, 5: return .string(texts.randomElement(using: &random) ?? "")
        case 6:
            return .array((0..<Int.random(in: 0...4, using: &random)).map { _ in value(&random, depth: depth + 1) })
        default:
            var object = [String: JSONValue]()
            for _ in 0..<Int.random(in: 0...5, using: &random) {
                object[texts.randomElement(using: &random) ?? ""] = value(&random, depth: depth + 1)
            }
            return .object(object)
        }
    }

    static func change(_ random: inout SplitMix64) -> SyncObjectChange {
        var fields = [FieldChange]()
        for _ in 0..<Int.random(in: 0...4, using: &random) {
            let name = texts.randomElement(using: &random) ?? "x"
            switch Int.random(in: 0..<4, using: &random) {
            case 0: fields.append(.set(name: name, value: value(&random)))
            case 1: fields.append(.list(name: name, base: [value(&random)], value: [value(&random), value(&random)]))
            case 2: fields.append(.setDiff(name: name, added: [value(&random)], removed: []))
            default:
                // A null map value reads back as a removed key with either coder.
                var values = [String: JSONValue?]()
                values["k"] = .some(.string("v"))
                values["gone"] = .some(nil)
                fields.append(.map(name: name, values: values))
            }
        }
        let kinds: [SyncObjectChange.Kind] = [.insert, .update, .delete]
        return SyncObjectChange(className: "Dog", primaryKey: .object(["$oid": .string("64b0c0ffee00000000000001")]),
                                kind: kinds.randomElement(using: &random) ?? .insert,
                                timestamp: "0001800000000000-00001-client", fields: fields,
                                defaultFields: Bool.random(using: &random) ? ["age"] : nil)
    }

    static func serverChange(_ random: inout SplitMix64) -> ServerChange {
        let document: JSONValue? = Bool.random(using: &random) ? value(&random) : nil
        return ServerChange(className: "Person", primaryKey: .int(Int64.random(in: 0...99, using: &random)),
                            document: document == .null ? nil : document, serverVersion: Int64.random(in: 1...1_000, using: &random),
                            timestamp: Bool.random(using: &random) ? "0001800000000000-00002-sql" : nil)
    }

    @Test func uploadsAndDownloadsReadTheSameWithEitherCoder() throws {
        var random = SplitMix64(seed: 39)
        for round in 0..<400 {
            let message: SyncMessage = round % 2 == 0
                ? .upload(.init(uploadId: Int64(round), changes: (0..<Int.random(in: 0...5, using: &random)).map { _ in
                    Self.change(&random) }))
                : .download(.init(changes: (0..<Int.random(in: 0...5, using: &random)).map { _ in Self.serverChange(&random) },
                                  serverVersion: Int64(round), completesSubscriptionVersion: round % 3 == 0 ? 7 : nil,
                                  hasMore: round % 5 == 0))
            let fast = SyncCoding.encode(message)
            let codable = SyncCoding.encodeWithCodable(message)
            #expect(try JSONValue(jsonText: fast) == JSONValue(jsonText: codable), "round \(round)")
            #expect(try SyncCoding.decode(fast) == message, "round \(round)")
            #expect(try SyncCoding.decodeWithCodable(fast) == message, "round \(round)")
            #expect(try SyncCoding.decode(codable) == message, "round \(round)")
        }
    }

    @Test func jsonTextIsWhatJSONEncoderWritesAndReadsAsJSONDecoderReads() throws {
        var random = SplitMix64(seed: 3_900)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for round in 0..<2_000 {
            let value = Self.value(&random)
            let expected = String(decoding: try encoder.encode(value), as: UTF8.self)
            #expect(value.jsonText == expected, "round \(round)")
            #expect(try JSONValue(jsonText: expected) == JSONDecoder().decode(JSONValue.self, from: Data(expected.utf8)),
                    "round \(round)")
        }
        // Numbers as PostgreSQL or another program writes them: an exact integer is an integer.
        for (text, value) in [("5.0", JSONValue.int(5)), ("1e3", .int(1000)), ("-0", .int(0)), ("2.5", .double(2.5)),
                              ("1e20", .double(1e20)), (" [1 , \"\\u00e9\\ud83d\\udc15\\/\" ] ", .array([.int(1), .string("é🐕/")]))]
        {
            #expect(try JSONValue(jsonText: text) == value, "\(text)")
            #expect(try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) == value, "\(text)")
        }
        for bad in ["", "{", "[1,]", "01", "\"\u{01}\"", "tru", "{\"a\" 1}", "1 2", "\"\\ud800\"", "--1"] {
            #expect(throws: (any Error).self, "\(bad)") { try JSONValue(jsonText: bad) }
        }
    }

    /// Session 36: an object's members are gathered and put into a dictionary of their number
    /// at its end (no dictionary grows while a document is read). A key given twice keeps its
    /// last value at every depth, as the parser kept it before, and nested objects' members stay
    /// their own.
    @Test func anObjectKeyGivenTwiceKeepsItsLastValueAndNestedMembersStayTheirOwn() throws {
        let text = #"{"a":1,"b":{"a":2,"c":{"a":3,"a":4},"d":{}},"a":5,"e":[{"a":6},{"a":7,"b":8}],"f":{"g":{"h":{"i":9}}}}"#
        let expected = JSONValue.object([
            "a": .int(5),
            "b": .object(["a": .int(2), "c": .object(["a": .int(4)]), "d": .object([:])]),
            "e": .array([.object(["a": .int(6)]), .object(["a": .int(7), "b": .int(8)])]),
            "f": .object(["g": .object(["h": .object(["i": .int(9)])])]),
        ])
        #expect(try JSONValue(jsonText: text) == expected)
    }
}
