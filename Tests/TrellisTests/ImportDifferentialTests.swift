import Foundation
import Testing
@testable import Trellis
import TrellisTestSupport

final class DiffItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var note: String?
    @Persisted var small = 0
    @Persisted var ratio: Float = 0
    @Persisted var score = 0.0
    @Persisted var when: Date?
    @Persisted var flag = false
    @Persisted var tags: List<String>
    @Persisted var numbers: List<Int?>
    @Persisted var labels: Map<String, Int>
    @Persisted var mixed: AnyRealmValue
}

/// Issue 34: seeded random Extended JSON documents, valid and invalid (wrong types, nulls, numbers
/// out of range, far dates, missing and repeated primary keys), imported one at a time through
/// the file's stored schema (`importDocuments(_:intoFile:)`) and through the model classes and
/// the Swift API (`importDocuments(_:as:into:)`, which writes with `realm.create`). Both must
/// accept or both refuse each document, as the generator expects; then both files must hold the
/// same objects, and what they hold must export and re-import to the same contents.
///
/// ```
/// TRELLIS_IMPORT_DOCUMENTS=5000 swift test --filter ImportDifferentialTests   # CI imports 300
/// ```
@Suite struct ImportDifferentialTests {
    let folder = TemporaryFolder()

    /// One field of a document: its JSON text and whether the Swift API takes it.
    typealias Field = (json: String, valid: Bool)

    struct Generator {
        var random: SplitMix64

        mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }
        mutating func pick<T>(_ choices: [T]) -> T { choices[Int.random(in: 0..<choices.count, using: &random)] }
        /// A field: one of the valid choices 85 times in 100, else any choice.
        mutating func pick(_ choices: [Field]) -> Field {
            let valid = choices.filter(\.valid)
            return !valid.isEmpty && chance(85) ? valid[Int.random(in: 0..<valid.count, using: &random)]
                : choices[Int.random(in: 0..<choices.count, using: &random)]
        }

        mutating func int() -> Field {
            pick([(#"{"$numberLong": "\#(Int64.random(in: .min ... .max, using: &random))"}"#, true),
                  (#"{"$numberInt": "\#(Int32.random(in: .min ... .max, using: &random))"}"#, true),
                  (#"{"$numberInt": "\#(Int64(Int32.max) + Int64.random(in: 1...1000, using: &random))"}"#, false),
                  (#"{"$numberLong": "99999999999999999999"}"#, false), ("\(Int.random(in: -99...99, using: &random))", true),
                  (#""12""#, false), ("1.5", false), ("null", false)])
        }

        mutating func string(optional: Bool) -> Field {
            pick([("\"text \(Int.random(in: 0...9, using: &random))\"", true), ("\"\"", true), ("null", optional),
                  ("5", false), ("true", false)])
        }

        mutating func float() -> Field {
            pick([(#"{"$numberDouble": "1.5"}"#, true), (#"{"$numberDouble": "1e300"}"#, false),
                  (#"{"$numberDouble": "-Infinity"}"#, true), ("3.25", true), ("1e39", false), ("null", false),
                  (#""x""#, false)])
        }

        mutating func double() -> Field {
            pick([(#"{"$numberDouble": "1e300"}"#, true), (#"{"$numberDouble": "NaN"}"#, true), ("-0.5", true),
                  ("7", true), ("null", false), ("[1]", false)])
        }

        mutating func date() -> Field {
            pick([(#"{"$date": {"$numberLong": "\#(Int64.random(in: .min ... .max, using: &random))"}}"#, true),
                  (#"{"$date": {"$numberLong": "9223372036854775807"}}"#, true),
                  (#"{"$date": {"$numberLong": "\#(Int64.random(in: -1 << 45 ... 1 << 45, using: &random))"}}"#, true),
                  ("null", true), (#"{"$date": "yesterday"}"#, false), ("12", false)])
        }

        /// (A JSON number is taken for a Bool by both, as Realm takes an NSNumber.)
        mutating func bool() -> Field { pick([("true", true), ("false", true), ("null", false), ("1", true), (#""yes""#, false)]) }

        mutating func list(_ element: (inout Generator) -> Field) -> Field {
            let elements = (0..<Int.random(in: 0...3, using: &random)).map { _ in element(&self) }
            return ("[" + elements.map(\.json).joined(separator: ", ") + "]", elements.allSatisfy(\.valid))
        }

        mutating func mixed() -> Field {
            pick([("5", true), (#""any""#, true), ("null", true), (#"[1, "two", [3.5]]"#, true),
                  (#"{"a": {"b": [true, null]}}"#, true), (#"{"$oid": "5f1b00000000000000000001"}"#, true),
                  (#"{"$numberInt": "2147483648"}"#, false)])
        }

        /// A document and whether the Swift API takes it; `ids` are the keys used so far (a
        /// repeated key updates that object, as `update: .modified` does).
        mutating func document(ids: inout [Int]) -> (json: String, valid: Bool) {
            var fields = [(String, Field)]()
            if !chance(4) {
                let id = !ids.isEmpty && chance(25) ? pick(ids) : Int.random(in: 0...1_000_000, using: &random)
                fields.append(("id", chance(3) ? ("null", false) : chance(2) ? ("\"\(id)\"", false) : ("\(id)", true)))
            } else {
                fields.append(("id", ("", false)))  // no primary key
            }
            if chance(60) { fields.append(("name", string(optional: false))) }
            if chance(50) { fields.append(("note", string(optional: true))) }
            if chance(50) { fields.append(("small", int())) }
            if chance(40) { fields.append(("ratio", float())) }
            if chance(40) { fields.append(("score", double())) }
            if chance(50) { fields.append(("when", date())) }
            if chance(30) { fields.append(("flag", bool())) }
            if chance(40) {
                fields.append(("tags", list { $0.pick([("\"t\"", true), ("null", false), ("2", false)]) }))
            }
            if chance(40) { fields.append(("numbers", list { $0.pick([("3", true), ("null", true), ("\"n\"", false)]) })) }
            if chance(30) {
                fields.append(("labels", pick([(#"{"a": 1, "b": 2}"#, true), ("{}", true), (#"{"a": null}"#, false),
                                               (#"{"a": "x"}"#, false)])))
            }
            if chance(40) { fields.append(("mixed", mixed())) }
            let present = fields.filter { !$0.1.json.isEmpty }
            let json = "{" + present.map { "\"\($0.0)\": \($0.1.json)" }.joined(separator: ", ") + "}"
            let valid = fields.allSatisfy { $0.1.valid }
            if valid, let id = present.first(where: { $0.0 == "id" }).flatMap({ Int($0.1.json) }), !ids.contains(id) {
                ids.append(id)
            }
            return (json, valid)
        }
    }

    func emptyFile(_ name: String) throws -> URL {
        let url = folder.file(name)
        try onOtherThread { _ = try Realm(configuration: .init(fileURL: url, objectTypes: [DiffItem.self])) }
        return url
    }

    /// Every document of the file's one class, sorted (their order is the objects' keys').
    func contents(_ url: URL) throws -> [String] {
        (try ExtendedJSON.documents(inFile: url)["DiffItem"] ?? []).map { String(decoding: $0, as: UTF8.self) }.sorted()
    }

    @Test func bothImportsAcceptAndRefuseTheSameDocumentsAndRoundTrip() throws {
        let environment = ProcessInfo.processInfo.environment
        let count = environment["TRELLIS_IMPORT_DOCUMENTS"].flatMap(Int.init) ?? 300
        let seed = environment["TRELLIS_IMPORT_SEED"].flatMap(UInt64.init) ?? 34
        var generator = Generator(random: SplitMix64(seed: seed))
        let stored = try emptyFile("stored.realm"), typed = try emptyFile("typed.realm")
        let realm = try Realm(configuration: .init(fileURL: typed, objectTypes: [DiffItem.self]))
        var ids = [Int](), accepted = 0, refused = 0
        for number in 1...count {
            let (json, valid) = generator.document(ids: &ids)
            let data = Data(json.utf8)
            var storedError: Realm.Error?, typedError: Realm.Error?
            do { _ = try ExtendedJSON.importDocuments(["DiffItem": [data]], intoFile: stored) } catch let e as Realm.Error { storedError = e }
            do { try ExtendedJSON.importDocuments([data], as: DiffItem.self, into: realm) } catch let e as Realm.Error { typedError = e }
            #expect((storedError == nil) == valid, "document \(number) \(json): stored import \(storedError?.message ?? "took it")")
            #expect((typedError == nil) == valid, "document \(number) \(json): typed import \(typedError?.message ?? "took it")")
            for error in [storedError, typedError].compactMap({ $0 }) {
                #expect(error.code == .invalidValue && error.message.hasPrefix("In document 1 of 'DiffItem'"),
                        "\(error.message)")
            }
            if valid { accepted += 1 } else { refused += 1 }
        }
        print("import differential: \(count) documents, seed \(seed): \(accepted) accepted, \(refused) refused, "
            + "\(ids.count) objects")
        #expect(accepted > count / 4 && refused > count / 4)

        let storedContents = try contents(stored)
        #expect(storedContents.count == ids.count)
        #expect(storedContents == (try contents(typed)))
        // What was accepted exports and re-imports to the same contents.
        let copy = try emptyFile("copy.realm")
        let exported = try ExtendedJSON.documents(inFile: stored)
        _ = try ExtendedJSON.importDocuments(exported, intoFile: copy)
        #expect(try contents(copy) == storedContents)
        let checked = try Realm(configuration: .init(fileURL: copy, objectTypes: [DiffItem.self]))
        #expect(checked._consistencyProblems().isEmpty)
        #expect(realm._consistencyProblems().isEmpty)
    }
}
