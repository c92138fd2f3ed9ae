import Foundation
import Testing
import Trellis

// The model of the Extended JSON fuzzer (Fuzz/Sources/FuzzExtendedJSON), so that its findings
// replay here exactly.
final class FuzzTag: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var weight = 0.0
}

final class FuzzSpot: EmbeddedObject {
    @Persisted var label = ""
    @Persisted var tag: FuzzTag?
    @Persisted var corners: List<Int>
}

final class FuzzItem: Object {
    @Persisted(primaryKey: true) var _id = 0
    @Persisted var ratio = 0.0
    @Persisted var small: Float = 0
    @Persisted var name: String?
    @Persisted var when = Date(timeIntervalSince1970: 0)
    @Persisted var amount = Decimal128(0)
    @Persisted var oid = ObjectId()
    @Persisted var blob: Data?
    @Persisted var uuid: UUID?
    @Persisted var done = false
    @Persisted var anything: AnyRealmValue
    @Persisted var tag: FuzzTag?
    @Persisted var tags: List<FuzzTag>
    @Persisted var numbers: MutableSet<Int>
    @Persisted var scores: Map<String, Double>
    @Persisted var spot: FuzzSpot?
    @Persisted var spots: List<FuzzSpot>
}

/// Inputs the Extended JSON fuzzer found stopping the process, replayed through the model
/// classes as the fuzzer imports them: each must import or throw `Realm.Error`.
@Suite struct ExtendedJSONFuzzRegressionTests {
    let folder = TemporaryFolder()

    static var findings: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: FuzzRegressionTests.findings.path)) ?? [])
            .filter { $0.hasPrefix("FuzzExtendedJSON-") }.sorted()
    }

    /// Lines of documents; a line that is a class name says whose documents follow.
    static func documents(_ data: Data) -> [String: [Data]] {
        var documents = [String: [Data]]()
        var current = "FuzzItem"
        for line in data.dropFirst().split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            if let name = String(bytes: line, encoding: .utf8), name.hasPrefix("Fuzz"), !name.contains("{") {
                current = name
            } else {
                documents[current, default: []].append(Data(line))
            }
        }
        return documents
    }

    @Test(arguments: findings)
    func aFindingImportsOrThrows(_ name: String) throws {
        let data = try Data(contentsOf: FuzzRegressionTests.findings.appendingPathComponent(name))
        let documents = Self.documents(data)
        let realm = try Realm(configuration: folder.configuration([FuzzItem.self, FuzzTag.self, FuzzSpot.self]))
        _ = try? ExtendedJSON.importDocuments(documents["FuzzTag"] ?? [], as: FuzzTag.self, into: realm)
        _ = try? ExtendedJSON.importDocuments(documents["FuzzItem"] ?? [], as: FuzzItem.self, into: realm)
        #expect(realm._consistencyProblems().isEmpty)
    }

    /// The first finding: `null` for an `AnyRealmValue` trapped ("Invalid value '<null>' of type
    /// 'NSNull'") instead of storing `.none`, as Realm does.
    @Test func nullForAnAnyRealmValueIsNone() throws {
        let realm = try Realm(configuration: folder.configuration([FuzzItem.self, FuzzTag.self, FuzzSpot.self]))
        try ExtendedJSON.importDocuments([Data(#"{"_id":{"$numberLong":"7"},"anything":null}"#.utf8)], as: FuzzItem.self,
                                         into: realm)
        #expect(realm.object(ofType: FuzzItem.self, forPrimaryKey: 7)?.anything == AnyRealmValue.none)
        #expect(Self.findings.count >= 1)
    }
}
