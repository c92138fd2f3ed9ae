import Foundation
import Trellis

// The models and data of Resources/LMDBFiles/every-kind.realm: a file written by the LMDB build
// of Trellis (catalog format 5, the last LMDB-format Trellis) holding every property kind the
// model API has (F2Fixture's scalars, links and collections are in the format-3 and -4 files). Compiled in both builds: the LMDB build writes the fixture
// (LMDBFileConversionTests.writesTheCheckedInFixtures), the TrellisStorage build opens it through
// `Realm(configuration:)` and compares it with a fresh file filled by the same code
// (LMDBFixtureOpenTests). `EveryKindFixture.populate` is deterministic (values come from the
// index only).

final class EKKind: Object {
    @Persisted(primaryKey: true) var id: ObjectId
    @Persisted(indexed: true) var code = ""
    @Persisted var small: Int8 = 0
    @Persisted var medium: Int16 = 0
    @Persisted var large: Int32 = 0
    @Persisted var wide: Int64 = 0
    @Persisted var optionalSmall: Int8?
    @Persisted var ratio: Float = 0
    @Persisted var score = 0.0
    @Persisted var flag = false
    @Persisted var optionalFlag: Bool?
    @Persisted var text: String?
    @Persisted var when: Date?
    @Persisted var optionalUUID: UUID?
    @Persisted var best: EKPart?
    @Persisted var home: EKPlace?
    @Persisted var mood: EKMood = .calm
    @Persisted var optionalMood: EKMood?
    @Persisted var numbers: List<Int>
    @Persisted var optionalDoubles: List<Double?>
    @Persisted var dates: List<Date>
    @Persisted var decimals: MutableSet<Decimal128>
    @Persisted var words: MutableSet<String>
    @Persisted var uuids: MutableSet<UUID>
    @Persisted var places: List<EKPlace>
    @Persisted var placesByName: Map<String, EKPlace?>
    @Persisted var friends: Map<String, EKKind?>
    @Persisted var weights: Map<String, Double>
    @Persisted(onDelete: .cascade) var parts: List<EKPart>
    @Persisted var partSet: MutableSet<EKPart>
    @Persisted var blob = Data()
    @Persisted var optionalBlob: Data?
    @Persisted var any: AnyRealmValue
    @Persisted var anyList: List<AnyRealmValue>
    @Persisted var anyMap: Map<String, AnyRealmValue>
}

enum EKMood: String, PersistableEnum { case calm, busy, asleep }

final class EKPlace: EmbeddedObject {
    @Persisted var name = ""
    @Persisted var tags: List<String>
}

final class EKPart: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var weight = 0.0
    @Persisted(originProperty: "parts") var kinds: LinkingObjects<EKKind>
}

enum EveryKindFixture {
    static let kindCount = 120

    static func types() -> [ObjectBase.Type] {
        [EKKind.self, EKPlace.self, EKPart.self]
    }

    static func mood(_ i: Int) -> EKMood { [EKMood.calm, .busy, .asleep][i % 3] }

    /// One transaction of inserts, one of deletes (gaps in the keys, cascaded parts), one of
    /// updates.
    static func populate(_ realm: Realm) throws {
        try realm.write {
            var previous: EKKind?
            for i in 0..<kindCount {
                let kind = EKKind()
                kind.id = F2Fixture.objectId(0x5000 + i)
                kind.code = "c\(i % 37)"
                kind.small = Int8(i % 100 - 50)
                kind.medium = Int16(i * 67 - 13000)
                kind.large = Int32(i * 100_003)
                kind.wide = Int64(i) * 1_000_000_007 - (1 << 40)
                kind.optionalSmall = i % 4 == 0 ? nil : Int8(i % 120)
                kind.ratio = Float(i) / 7
                kind.score = Double(i) * -0.75
                kind.flag = i % 2 == 1
                kind.optionalFlag = i % 3 == 0 ? nil : i % 3 == 1
                kind.text = i % 4 == 0 ? nil : "text \(i) ø"
                kind.when = i % 5 == 0 ? nil : Date(timeIntervalSinceReferenceDate: Double(i) * 3_600.25)
                kind.optionalUUID = i % 6 == 0 ? nil : F2Fixture.uuid(0x8000 + i)
                if i % 2 == 0 {
                    let home = EKPlace()
                    home.name = "home \(i)"
                    kind.home = home
                }
                kind.mood = mood(i)
                kind.optionalMood = i % 5 == 0 ? nil : mood(i + 1)
                kind.numbers.append(objectsIn: Array(0..<(i % 7)).map { $0 * i })
                kind.optionalDoubles.append(objectsIn: [1.5 * Double(i), nil])
                kind.dates.append(objectsIn: (0..<(i % 3)).map { Date(timeIntervalSinceReferenceDate: Double(i * 86_400 + $0)) })
                kind.decimals.insert(objectsIn: [Decimal128(Decimal(i) / 4), Decimal128(Decimal(-i))])
                kind.words.insert(objectsIn: ["w\(i % 5)", "x", i % 2 == 0 ? "ü\(i)" : "e\u{301}"])
                kind.uuids.insert(F2Fixture.uuid(0x6000 + i % 11))
                kind.places.append(objectsIn: (0..<(i % 3)).map { n in
                    let place = EKPlace()
                    place.name = "p\(i).\(n)"
                    place.tags.append(objectsIn: ["t\(n)", "t\(i % 4)"])
                    return place
                })
                let named = EKPlace()
                named.name = "named \(i)"
                kind.placesByName["home"] = named
                kind.placesByName["nowhere"] = nil
                if let previous { kind.friends["before"] = previous }
                kind.friends["none"] = nil
                kind.weights["w"] = Double(i) * 0.5
                kind.weights["ü"] = -Double(i)
                for n in 0..<(i % 3) {
                    let part = EKPart()
                    part.name = "part \(i).\(n)"
                    part.weight = Double(i * 10 + n)
                    kind.parts.append(part)
                    if n == 0 { kind.partSet.insert(part) }
                    if n == 1 { kind.best = part }
                }
                // Every 25th value is big (overflow pages in LMDB, chained values in TrellisStorage).
                kind.blob = Data((0..<(i % 25 == 0 ? 9000 : 20)).map { UInt8(($0 + i) % 256) })
                kind.optionalBlob = i % 3 == 0 ? nil : Data([UInt8(i % 256)])
                kind.any = anyValue(i)
                kind.anyList.append(objectsIn: [.int(i), .string("s\(i)"), .none, .double(Double(i) / 3)])
                kind.anyMap["k"] = .bool(i % 2 == 0)
                kind.anyMap["u"] = .uuid(F2Fixture.uuid(0x7000 + i))
                realm.add(kind)
                previous = kind
            }
        }
        try realm.write {
            for i in stride(from: 3, to: kindCount, by: 17) {
                if let kind = realm.object(ofType: EKKind.self, forPrimaryKey: F2Fixture.objectId(0x5000 + i)) {
                    realm.delete(kind)
                }
            }
        }
        try realm.write {
            for i in stride(from: 1, to: kindCount, by: 9) {
                guard let kind = realm.object(ofType: EKKind.self, forPrimaryKey: F2Fixture.objectId(0x5000 + i)) else {
                    continue
                }
                kind.code = "updated \(i)"
                kind.numbers.removeAll()
                kind.words.insert("updated")
                kind.any = .fromArray([.int(i), .fromDictionary(["inner": .string("deep \(i)")])])
            }
        }
    }

    static func anyValue(_ i: Int) -> AnyRealmValue {
        switch i % 6 {
        case 0: return .none
        case 1: return .int(i)
        case 2: return .string("any \(i)")
        case 3: return .decimal128(Decimal128(Decimal(i) / 1000))
        case 4: return .date(Date(timeIntervalSinceReferenceDate: Double(i) * 60))
        default: return .fromDictionary(["n": .int(i), "list": .fromArray([.bool(true), .float(Float(i) / 2)])])
        }
    }

    static func describe(_ kind: EKKind) -> String {
        typealias F = F2Fixture
        var fields: [String] = ["id=\(kind.id)", "code=\(F.text(kind.code))"]
        fields.append("ints=\(kind.small),\(kind.medium),\(kind.large),\(kind.wide),\(kind.optionalSmall.map { "\($0)" } ?? "nil")")
        fields.append("ratio=\(F.float(kind.ratio)) score=\(F.double(kind.score))")
        fields.append("flags=\(kind.flag),\(kind.optionalFlag.map { "\($0)" } ?? "nil")")
        fields.append("text=\(F.text(kind.text)) when=\(kind.when.map { F.date($0) } ?? "nil")")
        fields.append("optionalUUID=\(kind.optionalUUID?.uuidString ?? "nil")")
        fields.append("best=\(kind.best.map { F.text($0.name) } ?? "nil") home=\(kind.home.map { F.text($0.name) } ?? "nil")")
        fields.append("mood=\(kind.mood.rawValue),\(kind.optionalMood?.rawValue ?? "nil")")
        fields.append("numbers=[\(kind.numbers.map { "\($0)" }.joined(separator: ","))]")
        fields.append("optionalDoubles=[\(kind.optionalDoubles.map { $0.map { F.double($0) } ?? "nil" }.joined(separator: ","))]")
        fields.append("dates=[\(kind.dates.map { F.date($0) }.joined(separator: ","))]")
        fields.append("decimals=[\(kind.decimals.map(\.description).sorted().joined(separator: ","))]")
        fields.append("words=[\(kind.words.map { F.text($0) }.sorted().joined(separator: ","))]")
        fields.append("uuids=[\(kind.uuids.map(\.uuidString).sorted().joined(separator: ","))]")
        let places = kind.places.map { "\(F.text($0.name))/\($0.tags.joined(separator: "+"))" }
        fields.append("places=[\(places.joined(separator: ","))]")
        let byName = kind.placesByName.map { "\($0.key):\($0.value.map { F.text($0.name) } ?? "nil")" }.sorted()
        fields.append("placesByName=[\(byName.joined(separator: ","))]")
        let friends = kind.friends.map { "\($0.key):\($0.value.map { "\($0.id)" } ?? "nil")" }.sorted()
        fields.append("friends=[\(friends.joined(separator: ","))]")
        let weights = kind.weights.map { "\(F.text($0.key)):\(F.double($0.value))" }.sorted()
        fields.append("weights=[\(weights.joined(separator: ","))]")
        fields.append("parts=[\(kind.parts.map { "\(F.text($0.name))@\(F.double($0.weight))" }.joined(separator: ","))]")
        fields.append("partSet=[\(kind.partSet.map { F.text($0.name) }.sorted().joined(separator: ","))]")
        fields.append("blob=\(kind.blob.count):\(kind.blob.reduce(0) { ($0 &* 31 &+ Int($1)) & 0xffffff })")
        fields.append("optionalBlob=\(kind.optionalBlob.map { F.hex($0) } ?? "nil")")
        fields.append("any=\(F.any(kind.any))")
        fields.append("anyList=[\(kind.anyList.map { F.any($0) }.joined(separator: ","))]")
        fields.append("anyMap=[\(kind.anyMap.map { "\($0.key):\(F.any($0.value))" }.sorted().joined(separator: ","))]")
        return "EKKind " + fields.joined(separator: " ")
    }

    /// One line per kind (by id) and per part (by name, with the kinds that list it: a backlink).
    static func describe(_ realm: Realm) -> [String] {
        let kinds = realm.objects(EKKind.self).sorted(byKeyPath: "id").map { describe($0) }
        let parts = realm.objects(EKPart.self).sorted(byKeyPath: "name").map { part in
            "EKPart \(F2Fixture.text(part.name)) \(F2Fixture.double(part.weight)) kinds=[\(part.kinds.map { "\($0.id)" }.sorted().joined(separator: ","))]"
        }
        return Array(kinds) + Array(parts)
    }
}
