import Foundation
import Testing
import Trellis
@testable import TrellisSync
import TrellisSyncProtocol
import TrellisTestSupport

// Session 26 (issue 39): a local change's document is read into JSON values directly (no
// JSONSerialization text parsed back), and a download's documents are decoded from JSON values
// with Swift booleans and one batch decoder per frame. These differential tests hold the new
// paths to the old ones on random objects of every property kind (fixed seeds).

final class ConversionTarget: Object {
    @Persisted(primaryKey: true) var _id = 0
    @Persisted var name = ""
}

final class ConversionPart: EmbeddedObject {
    @Persisted var label = ""
    @Persisted var weight = 0.0
    @Persisted var flag: Bool?
}

final class ConversionSubject: Object {
    @Persisted(primaryKey: true) var _id = ObjectId.generate()
    @Persisted var int = 0
    @Persisted var optionalInt: Int?
    @Persisted var bool = false
    @Persisted var optionalBool: Bool?
    @Persisted var double = 0.0
    @Persisted var float: Float = 0
    @Persisted var string = ""
    @Persisted var optionalString: String?
    @Persisted var date = Date(timeIntervalSince1970: 0)
    @Persisted var decimal = Decimal128()
    @Persisted var data = Data()
    @Persisted var uuid = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    @Persisted var objectId = ObjectId.generate()
    @Persisted var mixed: AnyRealmValue
    @Persisted var link: ConversionTarget?
    @Persisted var links: List<ConversionTarget>
    @Persisted var part: ConversionPart?
    @Persisted var parts: List<ConversionPart>
    @Persisted var strings: List<String>
    @Persisted var bools: List<Bool>
    @Persisted var tags: MutableSet<String>
    @Persisted var scores: Map<String, Int>
    @Persisted var mixedList: List<AnyRealmValue>
}

let conversionTypes: [ObjectBase.Type] = [ConversionTarget.self, ConversionPart.self, ConversionSubject.self]

@Suite struct DocumentConversionTests {
    static let targetCount = 20

    /// The document a local commit records (`SyncEngine.document(of:)`, read directly) equals
    /// the one it recorded before (written as JSON text by JSONSerialization and parsed back),
    /// for 300 random objects with every property kind, awkward strings and special doubles.
    @Test(arguments: [UInt64(26), 2_026])
    func aRecordedDocumentEqualsItsJSONTextParsed(seed: UInt64) throws {
        try withRealm { realm in
            var random = SplitMix64(seed: seed)
            let subjects = try Self.makeSubjects(realm, count: 300, random: &random)
            for subject in subjects {
                let direct = try SyncEngine.document(of: subject)
                let throughText = try SyncEngine.documentThroughText(of: subject)
                #expect(direct == throughText, "seed \(seed), \(subject._id): \(JSONValue.object(direct).jsonText)")
            }
        }
    }

    /// The document a local commit records is read from the object's row (`DocumentRowReader`,
    /// session 33) and equals the one read through the properties' wrappers and written as JSON
    /// text: for 300 random objects of every property kind, read after their commit and again
    /// inside a write that changed them (what a commit's record reads).
    @Test(arguments: [UInt64(33), 3_333])
    func aDocumentReadFromTheRowEqualsItsJSONTextParsed(seed: UInt64) throws {
        try withRealm { realm in
            var random = SplitMix64(seed: seed)
            let subjects = try Self.makeSubjects(realm, count: 300, random: &random)
            let reader = DocumentRowReader<JSONValue>(realm: realm)
            for subject in subjects {
                let fromRow = try reader.document(of: subject)
                let throughText = try SyncEngine.documentThroughText(of: subject)
                #expect(fromRow == throughText, "seed \(seed), \(subject._id): \(JSONValue.object(fromRow).jsonText)")
            }
            let targets = Array(realm.objects(ConversionTarget.self))
            realm.beginWrite()
            let writer = DocumentRowReader<JSONValue>(realm: realm)
            for subject in subjects.prefix(50) {
                subject.string = Self.string(&random)
                subject.links.append(targets[random.below(targets.count)])
                subject.parts.append(ConversionPart(value: ["label": Self.string(&random)]))
                subject.part = random.chance(50) ? nil : ConversionPart(value: ["weight": 2.5])
                let fromRow = try writer.document(of: subject)
                #expect(try fromRow == SyncEngine.documentThroughText(of: subject),
                        "seed \(seed), \(subject._id) changed in the write")
            }
            realm.cancelWrite()
        }
    }

    /// An unmanaged object has no row: its document is read through its properties.
    @Test func anUnmanagedObjectsDocumentIsReadThroughItsProperties() throws {
        try withRealm { realm in
            let subject = ConversionSubject()
            subject.string = "unmanaged"
            subject.part = ConversionPart(value: ["label": "part"])
            let fromProperties = try DocumentRowReader<JSONValue>(realm: realm).document(of: subject)
            #expect(try fromProperties == SyncEngine.documentThroughText(of: subject))
        }
    }

    /// A downloaded document decoded the new way (Swift booleans, one decoder for the batch)
    /// makes the same object as the old way (Foundation objects, a decoder per document): both
    /// are created in their own Realm and their documents compared; and both give back the
    /// document they were made from.
    @Test(arguments: [UInt64(39), 3_939])
    func aDownloadedDocumentMakesTheSameObjectEitherWay(seed: UInt64) throws {
        try withRealm { source in
            var random = SplitMix64(seed: seed)
            let documents = try Self.makeSubjects(source, count: 200, random: &random).map { try SyncEngine.document(of: $0) }
            let targets = try Array(source.objects(ConversionTarget.self)).map { try SyncEngine.document(of: $0) }
            let made = try [true, false].map { newWay in
                try withRealm { realm -> [[String: JSONValue]] in
                    guard let schema = realm.schema["ConversionSubject"], let targetSchema = realm.schema["ConversionTarget"]
                    else { throw ToolError(description: "no schema") }
                    let decoder = ExtendedJSONBatchDecoder(realm: realm, skipsMissingLinks: true)
                    func values(_ document: [String: JSONValue], _ schema: ObjectSchema) throws -> [String: Any] {
                        if newWay { return try decoder.values(document.mapValues(\.decodableObject), schema: schema) }
                        return try ExtendedJSON.syncValues(document.mapValues(\.foundationObject), schema: schema,
                                                           realm: realm)
                    }
                    return try realm.write {
                        for target in targets { realm.create(ConversionTarget.self, value: try values(target, targetSchema)) }
                        return try documents.map { document in
                            let object = realm.create(ConversionSubject.self, value: try values(document, schema),
                                                      update: .modified)
                            return try SyncEngine.document(of: object)
                        }
                    }
                }
            }
            #expect(made[0] == made[1], "seed \(seed): the new decoding made other objects than the old one")
            #expect(made[0] == documents, "seed \(seed): a document did not come back as it went in")
        }
    }

    /// The batch decoder says which links it left out (their targets not in the Realm yet), by
    /// class and primary key: a download records them and sets the links when the targets
    /// arrive (a person whose dog comes later in the frame, or in a later one).
    @Test func theBatchDecoderSaysWhenItLeftALinkOut() throws {
        try withRealm { realm in
            guard let schema = realm.schema["ConversionSubject"] else { throw ToolError(description: "no schema") }
            let decoder = ExtendedJSONBatchDecoder(realm: realm, skipsMissingLinks: true)
            let document: [String: Any] = ["_id": ["$oid": "0123456789abcdef01234567"], "link": ["$numberLong": "7"],
                                           "links": [["$numberLong": "8"]]]
            try realm.write {
                let missing = try decoder.values(document, schema: schema)
                #expect(decoder.leftOutLink)
                // Named by class and key, whichever way the key is spelled, to be told when it arrives.
                #expect(Set(decoder.missingTargets) == [
                    ExtendedJSONBatchDecoder.linkTargetIdentity(className: "ConversionTarget", primaryKey: 7),
                    ExtendedJSONBatchDecoder.linkTargetIdentity(className: "ConversionTarget", primaryKey: 8),
                ])
                #expect(missing["link"] is NSNull && (missing["links"] as? [Any])?.isEmpty == true)
                realm.create(ConversionTarget.self, value: ["_id": 7])
                _ = try decoder.values(document, schema: schema)
                #expect(decoder.missingTargets == [
                    ExtendedJSONBatchDecoder.linkTargetIdentity(className: "ConversionTarget", primaryKey: 8),
                ], "the list's target 8 is still missing")
                realm.create(ConversionTarget.self, value: ["_id": 8])
                let found = try decoder.values(document, schema: schema)
                #expect(!decoder.leftOutLink)
                #expect((found["link"] as? ConversionTarget)?._id == 7 && (found["links"] as? [Any])?.count == 1)
            }
        }
    }

    // MARK: - Random objects

    static let awkwardStrings = ["", "plain", "quote \" and backslash \\", "slash / and </script>", "tab\tnew\nline",
                                 "\u{0}\u{1}\u{1F}", "ünïcödé", "emoji 👩‍👩‍👧", "\u{2028}\u{2029}", "$oid", "{\"$numberLong\": \"1\"}"]
    static let doubles: [Double] = [0, -0.0, 1, -1.5, 0.1, 1e300, -1e-300, 123_456_789.123, .nan, .infinity,
                                    -.infinity, 1e15, 1e16, .ulpOfOne, Double(Int64.max)]

    static func makeSubjects(_ realm: Realm, count: Int, random: inout SplitMix64) throws -> [ConversionSubject] {
        try realm.write {
            for id in 0..<targetCount { realm.add(ConversionTarget(value: ["_id": id, "name": "target \(id)"])) }
        }
        let targets = Array(realm.objects(ConversionTarget.self))
        var subjects = [ConversionSubject]()
        try realm.write {
            for _ in 0..<count {
                let subject = ConversionSubject()
                subject.int = Int(truncatingIfNeeded: random.next()) >> random.below(64)
                subject.optionalInt = random.chance(30) ? nil : random.below(1_000) - 500
                subject.bool = random.chance(50)
                subject.optionalBool = random.chance(30) ? nil : random.chance(50)
                subject.double = doubles[random.below(doubles.count)]
                subject.float = Float(doubles[random.below(doubles.count)])
                subject.string = string(&random)
                subject.optionalString = random.chance(30) ? nil : string(&random)
                subject.date = Date(timeIntervalSince1970: Double(random.below(4_000_000_000_000)) / 1_000)
                subject.decimal = try Decimal128(string: "\(random.below(100_000) - 50_000).\(random.below(100))")
                subject.data = Data(random.bytes(random.below(40)))
                subject.uuid = UUID()
                subject.objectId = ObjectId.generate()
                subject.mixed = mixed(&random, depth: 0)
                subject.link = random.chance(30) ? nil : targets[random.below(targets.count)]
                for _ in 0..<random.below(4) { subject.links.append(targets[random.below(targets.count)]) }
                if random.chance(70) {
                    subject.part = ConversionPart(value: ["label": string(&random), "weight": doubles[random.below(5)],
                                                          "flag": random.chance(50) ? NSNull() as Any : random.chance(50) as Any])
                }
                for _ in 0..<random.below(3) { subject.parts.append(ConversionPart(value: ["label": string(&random)])) }
                for _ in 0..<random.below(4) { subject.strings.append(string(&random)) }
                for _ in 0..<random.below(4) { subject.bools.append(random.chance(50)) }
                for _ in 0..<random.below(4) { subject.tags.insert(string(&random)) }
                for _ in 0..<random.below(4) { subject.scores["k\(random.below(10))"] = random.below(100) }
                for _ in 0..<random.below(4) { subject.mixedList.append(mixed(&random, depth: 2)) }
                realm.add(subject)
                subjects.append(subject)
            }
        }
        return subjects
    }

    static func string(_ random: inout SplitMix64) -> String { awkwardStrings[random.below(awkwardStrings.count)] }

    static func mixed(_ random: inout SplitMix64, depth: Int) -> AnyRealmValue {
        switch random.below(depth < 2 ? 10 : 8) {
        case 0: return .none
        case 1: return .bool(random.chance(50))
        case 2: return .int(random.below(1_000_000) - 500_000)
        case 3: return .double(doubles[random.below(doubles.count)])
        case 4: return .string(string(&random))
        case 5: return .date(Date(timeIntervalSince1970: Double(random.below(1_000_000))))
        case 6: return .objectId(ObjectId.generate())
        case 7: return .uuid(UUID())
        case 8: return .fromArray([mixed(&random, depth: depth + 1), mixed(&random, depth: depth + 1)])
        default: return .fromDictionary(["a": mixed(&random, depth: depth + 1), "b$": mixed(&random, depth: depth + 1)])
        }
    }
}

/// Runs `body` with a new Realm of `types` (the conversion models) in a temporary folder.
func withRealm<T>(_ types: [ObjectBase.Type] = conversionTypes, _ body: (Realm) throws -> T) throws -> T {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("conversion-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let configuration = Realm.Configuration(fileURL: folder.appendingPathComponent("c.realm"), objectTypes: types)
    return try DispatchQueue(label: "conversion").sync {
        let realm = try Realm(configuration: configuration)
        return try body(realm)
    }
}
