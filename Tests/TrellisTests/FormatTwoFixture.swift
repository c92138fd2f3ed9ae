import Foundation
import Trellis

// The models and data of Resources/FormatTwo/format2.realm: a file written by the release of
// file format 2 (commit 8ebe6ef) with this file compiled into a small writer. This file must
// keep compiling unchanged against that release, so it uses the public model API only.
// `F2Fixture.populate` is deterministic (values come from the index only), so a fresh file it
// fills and the upgraded fixture must give the same `F2Fixture.describe` lines.

class F2Owner: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var name: String
    @Persisted var nickname: String?
    @Persisted var age: Int
    @Persisted var optAge: Int?
    @Persisted var score: Double
    @Persisted var ratio: Float?
    @Persisted var flag: Bool
    @Persisted var optFlag: Bool?
    @Persisted var born: Date
    @Persisted var seen: Date?
    @Persisted var oid: ObjectId
    @Persisted var optOid: ObjectId?
    @Persisted var uuid: UUID
    @Persisted var data: Data
    @Persisted var decimal: Decimal128
    @Persisted var any: AnyRealmValue
    @Persisted var dog: F2Dog?
    @Persisted var dogs: List<F2Dog>
    @Persisted var tags: MutableSet<String>
    @Persisted var scores: Map<String, Int>
    @Persisted var address: F2Address?
}

class F2Dog: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var name: String
    @Persisted var age: Int
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<F2Owner>
}

class F2Address: EmbeddedObject {
    @Persisted var street: String
    @Persisted var city: String?
}

enum F2Fixture {
    static let ownerCount = 700
    static let dogCount = 300

    static func types() -> [ObjectBase.Type] {
        [F2Owner.self, F2Dog.self, F2Address.self]
    }

    /// `n` in lowercase hexadecimal, zero-padded to `width` digits.
    static func hexDigits(_ n: Int, _ width: Int) -> String {
        let digits = String(n, radix: 16)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// A fixed ObjectId from a number.
    static func objectId(_ n: Int) -> ObjectId {
        try! ObjectId(string: hexDigits(n, 24))
    }

    /// A fixed UUID from a number.
    static func uuid(_ n: Int) -> UUID {
        let chars = Array(hexDigits(n, 32))
        let parts = [chars[0..<8], chars[8..<12], chars[12..<16], chars[16..<20], chars[20..<32]].map { String($0) }
        return UUID(uuidString: parts.joined(separator: "-"))!
    }

    static func dogName(_ i: Int) -> String {
        switch i % 10 {
        case 0: ""
        case 3: "Fidø \(i)"
        case 6: "🐕 \(i)"
        default: "dog \(i)"
        }
    }

    static func ownerName(_ i: Int) -> String {
        if i % 50 == 0 { return "" }
        switch i % 6 {
        case 1: return "Zoë \(i)"
        case 4: return "e\u{301} \(i)"
        default: return "owner \(i)"
        }
    }

    static func any(_ i: Int, dogs: [F2Dog]) -> AnyRealmValue {
        switch i % 13 {
        case 0: return .none
        case 1: return .int(i - 400)
        case 2: return .bool(i % 2 == 0)
        case 3: return .float(Float(i) / 8)
        case 4: return .double(Double(i) * -1.25)
        case 5: return .string(i % 3 == 0 ? "" : "any \(i) ü")
        case 6: return .data(Data([UInt8(i & 0xff), 0, 0xff]))
        case 7: return .date(Date(timeIntervalSinceReferenceDate: Double(i) * 3600))
        case 8: return .objectId(objectId(0x1000 + i))
        case 9: return .decimal128(Decimal128(Decimal(i) / 100))
        case 10: return .uuid(uuid(0x2000 + i))
        case 11:
            // Never a dog the second transaction deletes (every 11th).
            let d = (i * 3 + 1) % dogs.count
            return .object(dogs[d % 11 == 0 ? d + 1 : d])
        default:
            return .fromDictionary([
                "n": .int(i),
                "list": .fromArray([.string("x\(i)"), .bool(true), .none]),
            ])
        }
    }

    /// Fills an empty Realm: one transaction of inserts, one of deletes (gaps in the object
    /// keys), one of updates.
    static func populate(_ realm: Realm) throws {
        try realm.write {
            var dogs: [F2Dog] = []
            for i in 0..<dogCount {
                let dog = F2Dog()
                dog.id = i
                dog.name = dogName(i)
                dog.age = i % 17 == 0 ? -(i % 5) - 1 : i % 20
                realm.add(dog)
                dogs.append(dog)
            }
            for i in 0..<ownerCount {
                let owner = F2Owner()
                owner.id = i
                owner.name = ownerName(i)
                owner.nickname = i % 3 == 0 ? nil : (i % 3 == 1 ? "" : "nick \(i)")
                owner.age = i % 4 == 0 ? -i : i % 90
                owner.optAge = i % 5 == 0 ? nil : i - 300
                switch i {
                case 17: owner.score = .nan
                case 18: owner.score = -0.0
                case 19: owner.score = .infinity
                default: owner.score = Double(i) / 7
                }
                owner.ratio = i % 4 == 1 ? nil : Float(i) / 3
                owner.flag = i % 2 == 0
                owner.optFlag = i % 3 == 0 ? nil : i % 3 == 1
                owner.born = Date(timeIntervalSinceReferenceDate: Double(i) * 86_400 - 1_000_000_000)
                owner.seen = i % 6 == 0 ? nil : Date(timeIntervalSinceReferenceDate: Double(i) * 1.5)
                owner.oid = objectId(i)
                owner.optOid = i % 7 == 3 ? nil : objectId(0x100000 + i)
                owner.uuid = uuid(i)
                owner.data = Data((0..<(i % 5)).map { UInt8((i + $0 * 37) & 0xff) })
                owner.decimal = Decimal128(Decimal(i * 31 - 5000) / 1000)
                owner.any = any(i, dogs: dogs)
                owner.dog = i % 5 == 0 ? nil : dogs[(i * 7) % dogCount]
                // Several owners share each dog; some lists repeat a dog, some are empty.
                for k in 0..<(i % 4) {
                    owner.dogs.append(dogs[(i + k * 101) % dogCount])
                }
                if i % 10 == 9 { owner.dogs.append(dogs[i % dogCount]) }
                for k in 0..<(i % 3) {
                    owner.tags.insert("tag \((i + k) % 12)")
                }
                if i % 8 == 5 { owner.tags.insert("") }
                for k in 0..<(i % 4) {
                    owner.scores["k\(k)"] = i * 10 - k * 777
                }
                if i % 9 == 2 { owner.scores["ï"] = -1 }
                if i % 4 != 3 {
                    let address = F2Address()
                    address.street = i % 11 == 0 ? "" : "\(i) Main Street"
                    address.city = i % 3 == 0 ? nil : (i % 2 == 0 ? "Oslo" : "Zürich")
                    owner.address = address
                }
                realm.add(owner)
            }
        }
        // Gaps in the object keys.
        try realm.write {
            for i in stride(from: 0, to: ownerCount, by: 7) {
                if let owner = realm.object(ofType: F2Owner.self, forPrimaryKey: i) { realm.delete(owner) }
            }
            for i in stride(from: 0, to: dogCount, by: 11) {
                if let dog = realm.object(ofType: F2Dog.self, forPrimaryKey: i) { realm.delete(dog) }
            }
        }
        // A few updates.
        try realm.write {
            for i in stride(from: 1, to: ownerCount, by: 50) {
                guard let owner = realm.object(ofType: F2Owner.self, forPrimaryKey: i) else { continue }
                owner.name = "renamed \(i) ß"
                owner.nickname = nil
                owner.optAge = 1_000 + i
                owner.dogs.removeAll()
                if let dog = realm.object(ofType: F2Dog.self, forPrimaryKey: 1) { owner.dogs.append(dog) }
                owner.tags.insert("updated")
                owner.scores["k0"] = nil
                owner.scores["new"] = i
                owner.address = i % 2 == 1 ? nil : owner.address
                owner.any = .string("updated \(i)")
            }
            for i in stride(from: 2, to: dogCount, by: 40) {
                guard let dog = realm.object(ofType: F2Dog.self, forPrimaryKey: i) else { continue }
                dog.name = "old \(i)"
                dog.age += 100
            }
            // Added after the deletes: new keys after the gaps.
            let late = F2Dog()
            late.id = dogCount + 1
            late.name = "late"
            late.age = 1
            realm.add(late)
            if let owner = realm.object(ofType: F2Owner.self, forPrimaryKey: 2) {
                owner.dogs.append(late)
                owner.dog = late
            }
        }
    }

    // MARK: - Rendering

    static func text(_ s: String?) -> String {
        guard let s else { return "nil" }
        // Quoted with the scalars of non-ASCII characters spelled out, so that "é" and
        // "e\u{301}" stay different lines.
        var out = "\""
        for scalar in s.unicodeScalars {
            if scalar.isASCII, scalar != "\"", scalar != "\\", scalar.value >= 0x20 {
                out.unicodeScalars.append(scalar)
            } else {
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            }
        }
        return out + "\""
    }

    static func double(_ d: Double) -> String { d.isNaN ? "nan" : "\(d)" }
    static func float(_ f: Float) -> String { f.isNaN ? "nan" : "\(f)" }
    static func date(_ d: Date) -> String { double(d.timeIntervalSinceReferenceDate) }
    static func hex(_ data: Data) -> String { "0x" + data.map { hexDigits(Int($0), 2) }.joined() }

    static func any(_ value: AnyRealmValue) -> String {
        switch value {
        case .none: return "none"
        case .int(let v): return "int(\(v))"
        case .bool(let v): return "bool(\(v))"
        case .float(let v): return "float(\(float(v)))"
        case .double(let v): return "double(\(double(v)))"
        case .string(let v): return "string(\(text(v)))"
        case .data(let v): return "data(\(hex(v)))"
        case .date(let v): return "date(\(date(v)))"
        case .object(let v):
            if let dog = v as? F2Dog { return "object(F2Dog \(dog.id))" }
            if let owner = v as? F2Owner { return "object(F2Owner \(owner.id))" }
            return "object(?)"
        case .objectId(let v): return "objectId(\(v))"
        case .decimal128(let v): return "decimal128(\(v.description))"
        case .uuid(let v): return "uuid(\(v.uuidString))"
        case .dictionary(let map):
            let entries = map.map { "\(text($0.key)): \(any($0.value))" }.sorted()
            return "dictionary[\(entries.joined(separator: ", "))]"
        case .list(let list):
            return "list[\(list.map { any($0) }.joined(separator: ", "))]"
        }
    }

    static func describe(_ owner: F2Owner) -> String {
        var fields: [String] = []
        fields.append("id=\(owner.id)")
        fields.append("name=\(text(owner.name))")
        fields.append("nickname=\(text(owner.nickname))")
        fields.append("age=\(owner.age)")
        fields.append("optAge=\(owner.optAge.map { "\($0)" } ?? "nil")")
        fields.append("score=\(double(owner.score))")
        fields.append("ratio=\(owner.ratio.map { float($0) } ?? "nil")")
        fields.append("flag=\(owner.flag)")
        fields.append("optFlag=\(owner.optFlag.map { "\($0)" } ?? "nil")")
        fields.append("born=\(date(owner.born))")
        fields.append("seen=\(owner.seen.map { date($0) } ?? "nil")")
        fields.append("oid=\(owner.oid)")
        fields.append("optOid=\(owner.optOid.map { "\($0)" } ?? "nil")")
        fields.append("uuid=\(owner.uuid.uuidString)")
        fields.append("data=\(hex(owner.data))")
        fields.append("decimal=\(owner.decimal.description)")
        fields.append("any=\(any(owner.any))")
        fields.append("dog=\(owner.dog.map { "\($0.id)" } ?? "nil")")
        fields.append("dogs=[\(owner.dogs.map { "\($0.id)" }.joined(separator: ","))]")
        fields.append("tags=[\(owner.tags.map { text($0) }.sorted().joined(separator: ","))]")
        let scores = owner.scores.map { ($0.key, $0.value) }.sorted { $0.0 < $1.0 }
        fields.append("scores=[\(scores.map { "\(text($0.0)):\($0.1)" }.joined(separator: ","))]")
        if let address = owner.address {
            fields.append("address=(street=\(text(address.street)) city=\(text(address.city)))")
        } else {
            fields.append("address=nil")
        }
        return "F2Owner " + fields.joined(separator: " ")
    }

    static func describe(_ dog: F2Dog) -> String {
        let owners = dog.owners.map(\.id).sorted().map { "\($0)" }.joined(separator: ",")
        return "F2Dog id=\(dog.id) name=\(text(dog.name)) age=\(dog.age) owners=[\(owners)]"
    }

    /// One line per live object: owners then dogs, each by primary key; an address is part of
    /// its owner's line.
    static func describe(_ realm: Realm) -> [String] {
        let owners = realm.objects(F2Owner.self).sorted(byKeyPath: "id").map { describe($0) }
        let dogs = realm.objects(F2Dog.self).sorted(byKeyPath: "id").map { describe($0) }
        return Array(owners) + Array(dogs)
    }
}
