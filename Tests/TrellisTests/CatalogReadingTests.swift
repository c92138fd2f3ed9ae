import Foundation
import Testing
@testable import Trellis
import TrellisTestSupport

/// The stored catalog's own reader (`SchemaCatalog.read`) against `JSONDecoder`, which it
/// replaces on every open: the same catalog from what `encoded()` writes, and nil (so that
/// `JSONDecoder` decides) for any text it does not expect.
@Suite struct CatalogReadingTests {
    private static let names = ["Dog", "Person", "a/b", "quote\"d", "back\\slash", "tab\tand\nnewline", "émile",
                                "日本語", "🐕 dog", "ctrl\u{01}", "", "Fifty00"]

    private static func randomCatalog(_ random: inout SplitMix64) -> SchemaCatalog {
        var catalog = SchemaCatalog()
        catalog.format = random.pick(1...9)
        catalog.columnShift = random.pick(0...3) == 0 ? nil : random.pick(0...12)
        catalog.schemaVersion = random.pick(0...3) == 0 ? UInt64.max - UInt64(random.pick(0...5))
            : UInt64(random.pick(0...1_000))
        catalog.nextTableId = UInt32(random.pick(1...100_000))
        for index in 0..<random.pick(0...6) {
            func property() -> SchemaCatalog.StoredProperty {
                SchemaCatalog.StoredProperty(
                    name: names[random.pick(0...(names.count - 1))], type: random.pick(0...20),
                    optional: random.pick(0...1) == 1,
                    collection: [CollectionKind.none, .list, .set, .map][random.pick(0...3)],
                    target: random.pick(0...1) == 1 ? names[random.pick(0...(names.count - 1))] : nil,
                    primary: random.pick(0...1) == 1, indexed: random.pick(0...1) == 1,
                    origin: random.pick(0...3) == 0 ? "owner" : nil,
                    onDelete: random.pick(0...3) == 0 ? "cascade" : nil)
            }
            catalog.classes.append(SchemaCatalog.StoredClass(
                name: "\(names[random.pick(0...(names.count - 1))])\(index)", tableId: UInt32(random.pick(0...1_000)),
                embedded: random.pick(0...1) == 1,
                properties: (0..<random.pick(0...8)).map { _ in property() },
                computed: (0..<random.pick(0...2)).map { _ in property() },
                swiftType: random.pick(0...1) == 1 ? "$s7Module3DogC" : nil))
        }
        return catalog
    }

    private static func read(_ text: String) -> SchemaCatalog? {
        Array(text.utf8).withUnsafeBytes { SchemaCatalog.read($0) }
    }

    private static func decoded(_ text: String) -> SchemaCatalog? {
        try? JSONDecoder().decode(SchemaCatalog.self, from: Data(text.utf8))
    }

    @Test(arguments: [1, 2, 3, 4])
    func everyCatalogTheEncoderWritesReadsAsJSONDecoderReadsIt(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0..<200 {
            let catalog = Self.randomCatalog(&random)
            let bytes = catalog.encoded()
            let read = bytes.withUnsafeBytes { SchemaCatalog.read($0) }
            let decoded = try JSONDecoder().decode(SchemaCatalog.self, from: Data(bytes))
            #expect(read == decoded)
            #expect(read == catalog)
        }
    }

    @Test func prettyPrintedCatalogsAndUnknownMembersReadToo() throws {
        var random = SplitMix64(seed: 9)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .withoutEscapingSlashes]
        for _ in 0..<50 {
            let catalog = Self.randomCatalog(&random)
            let text = try #require(String(data: try encoder.encode(catalog), encoding: .utf8))
            #expect(Self.read(text) == catalog)
        }
        let extra = #"{"classes":[],"format":6,"future":{"a":[1,true,null,"x"]},"nextTableId":1,"schemaVersion":0}"#
        #expect(Self.read(extra) == Self.decoded(extra))
        #expect(Self.read(extra)?.columnShift == nil)
        let nulls = #"{"classes":[{"computed":[],"embedded":false,"name":"A","properties":[{"collection":"none","indexed":false,"name":"p","optional":true,"origin":null,"primary":false,"target":null,"type":1}],"swiftType":null,"tableId":1}],"columnShift":null,"format":6,"nextTableId":2,"schemaVersion":0}"#
        #expect(Self.read(nulls) != nil)
        #expect(Self.read(nulls) == Self.decoded(nulls))
    }

    @Test func textTheReaderDoesNotExpectIsLeftToJSONDecoder() {
        let valid = #"{"classes":[],"columnShift":8,"format":6,"nextTableId":1,"schemaVersion":0}"#
        #expect(Self.read(valid) != nil)
        let unexpected = [
            #"{"classes":[],"format":6,"format":7,"nextTableId":1,"schemaVersion":0}"#,  // duplicated key
            #"{"classes":[],"format":6.0,"nextTableId":1,"schemaVersion":0}"#,  // a fraction
            #"{"classes":[],"format":6e0,"nextTableId":1,"schemaVersion":0}"#,  // an exponent
            #"{"classes":[],"format":06,"nextTableId":1,"schemaVersion":0}"#,  // a leading zero
            #"{"classes":[],"format":6,"nextTableId":-1,"schemaVersion":0}"#,  // out of UInt32
            #"{"classes":[],"format":6,"nextTableId":1,"schemaVersion":"0"}"#,  // a string for a number
            #"{"classes":[],"format":6,"nextTableId":1}"#,  // a required member missing
            #"{"classes":[],"format":6,"nextTableId":1,"schemaVersion":0,}"#,  // a trailing comma
            #"{"classes":[],"format":6,"nextTableId":1,"schemaVersion":0} x"#,  // text after the value
            #"{"classes":[{"computed":[],"embedded":false,"name":"A","properties":[{"collection":"bag","indexed":false,"name":"p","optional":true,"primary":false,"type":1}],"tableId":1}],"format":6,"nextTableId":2,"schemaVersion":0}"#,
            "{\"classes\":[],\"format\":6,\"nextTableId\":1,\"schemaVersion\":0,\"x\":\"a\u{01}b\"}",  // a raw control character
            #"{"classes":[],"format":6,"nextTableId":1,"schemaVersion":0,"x":"\q"}"#,  // an unknown escape
            #"{"classes":[],"format":6,"nextTableId":1,"schemaVersion":0,"x":"\ud800"}"#,  // a lone surrogate
        ]
        for text in unexpected {
            #expect(Self.read(text) == nil, "\(text)")
        }
        // Where the reader gives up, `decode` gives JSONDecoder's answer.
        for text in unexpected + [valid] {
            let decoded = Array(text.utf8).withUnsafeBytes { SchemaCatalog.decode($0) }
            #expect(decoded == Self.decoded(text), "\(text)")
        }
    }

    @Test func escapedStringsReadAsTheirCharacters() {
        let text = #"{"classes":[{"computed":[],"embedded":true,"name":"a\/b \"q\" \\ \b\f\n\r\t \u00e9 \ud83d\udc15","properties":[],"tableId":3}],"format":6,"nextTableId":4,"schemaVersion":7}"#
        #expect(Self.read(text)?.classes.first?.name == "a/b \"q\" \\ \u{08}\u{0C}\n\r\t é 🐕")
        #expect(Self.read(text) == Self.decoded(text))
    }
}

private extension SplitMix64 {
    /// A number in `range`.
    mutating func pick(_ range: ClosedRange<Int>) -> Int { range.lowerBound + below(range.count) }
}
