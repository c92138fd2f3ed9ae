import Foundation
import Trellis

// The model of Fuzz/Sources/FuzzFile (same class names and properties), to read back the
// damaged files the file fuzzer found (Tests/TrellisTests/FuzzRegressionTests.swift).
final class FuzzDog: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var owners: List<FuzzPerson>
}

final class FuzzPerson: Object {
    @Persisted var name = ""
    @Persisted var dog: FuzzDog?
    @Persisted var address: FuzzAddress?
    @Persisted(originProperty: "owners") var dogs: LinkingObjects<FuzzDog>
}

final class FuzzAddress: EmbeddedObject {
    @Persisted var street = ""
}

enum DamagedFileReader {
    /// Opens the file read-only and reads every object: prints `error: …` if opening throws,
    /// `read N objects` otherwise.
    static func read(path: String) {
        var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path),
                                                objectTypes: [FuzzDog.self, FuzzPerson.self, FuzzAddress.self])
        configuration.readOnly = true
        do {
            let realm = try Realm(configuration: configuration)
            var objects = 0
            for dog in realm.objects(FuzzDog.self) { objects += 1 + dog.name.count * 0 + dog.owners.count * 0 }
            for person in realm.objects(FuzzPerson.self) {
                objects += 1 + (person.dog?.id ?? 0) * 0 + (person.address?.street.count ?? 0) * 0
            }
            print("read \(objects) objects")
        } catch {
            print("error: \(error)")
        }
    }
}

// MARK: - The flip test's file: every kind of property

/// Every kind of property a file can hold (issue 34's flip test,
/// Tests/TrellisTests/DamagedFileFlipTests.swift): scalars of each type, strings and data,
/// lists, sets and maps of values, to-one links and lists of links, embedded objects alone and
/// in a list, and `AnyRealmValue` holding nested lists and dictionaries.
final class FlipItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var name = ""
    @Persisted var blob: Data?
    @Persisted var score = 0.0
    @Persisted var ratio: Float = 0
    @Persisted var flag = false
    @Persisted var when: Date?
    @Persisted var oid: ObjectId?
    @Persisted var uuid: UUID?
    @Persisted var amount = Decimal128(0)
    @Persisted var tags: List<String>
    @Persisted var numbers: MutableSet<Int>
    @Persisted var labels: Map<String, String>
    @Persisted var friend: FlipItem?
    @Persisted var friends: List<FlipItem>
    @Persisted var place: FlipPlace?
    @Persisted var places: List<FlipPlace>
    @Persisted var mixed: AnyRealmValue
    @Persisted(originProperty: "friends") var fans: LinkingObjects<FlipItem>
}

final class FlipPlace: EmbeddedObject {
    @Persisted var city = ""
    @Persisted var codes: List<Int>
}

enum FlipFile {
    static func configuration(_ path: String, readOnly: Bool) -> Realm.Configuration {
        var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path),
                                                objectTypes: [FlipItem.self, FlipPlace.self])
        configuration.readOnly = readOnly
        return configuration
    }

    /// Writes the flip test's file: `count` items, each property filled from its number.
    static func make(path: String, count: Int) throws {
        let realm = try Realm(configuration: configuration(path, readOnly: false))
        try realm.write {
            var items = [FlipItem]()
            for i in 0..<count {
                let item = FlipItem()
                item.id = i
                item.name = "item \(i) " + String(repeating: "é", count: i % 7)
                item.blob = i % 3 == 0 ? nil : Data((0..<(i % 40)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ i) })
                item.score = Double(i) * 1.5
                item.ratio = Float(i) / 4
                item.flag = i % 2 == 0
                item.when = Date(timeIntervalSince1970: Double(i) * 86_400)
                item.oid = try ObjectId(string: String(format: "%024x", i + 1))
                item.uuid = i % 4 == 0 ? nil : UUID(uuid: (UInt8(i & 255), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
                item.amount = Decimal128(Decimal(i) / 100)
                item.tags.append(objectsIn: (0..<(i % 9)).map { "tag \($0) of \(i)" })
                item.numbers.insert(objectsIn: (0..<(i % 6)).map { $0 * i })
                for k in 0..<(i % 5) { item.labels["key\(k)"] = "label \(k)" }
                item.place = i % 2 == 0 ? FlipPlace(value: ["city": "city \(i)", "codes": [i, i + 1]]) : nil
                for k in 0..<(i % 3) { item.places.append(FlipPlace(value: ["city": "place \(k)", "codes": [k]])) }
                switch i % 5 {
                case 0: item.mixed = .int(i)
                case 1: item.mixed = .string("mixed \(i)")
                case 2: item.mixed = .fromArray([.int(i), .string("in a list"), .fromArray([.double(0.5), .bool(true)])])
                case 3: item.mixed = .fromDictionary(["a": .int(i), "b": .fromDictionary(["c": .string("deep")]),
                                                      "d": .fromArray([.none, .int(2)])])
                default: item.mixed = .none
                }
                items.append(item)
            }
            realm.add(items)
            for (i, item) in items.enumerated() {
                item.friend = items[(i * 7 + 3) % items.count]
                item.friends.append(objectsIn: (0..<(i % 4)).map { items[(i + $0 * 11) % items.count] })
                if i % 9 == 0 { item.mixed = .object(items[(i + 1) % items.count]) }
            }
        }
    }

    /// Opens the file read-only and reads everything: every property of every object, the
    /// collections' elements, the linked and embedded objects, the linking objects, and queries,
    /// sorts and aggregates (which read the column copies and indexes). Prints `error: …` if
    /// opening throws, else `read N objects digest D`, D a hash of everything read.
    static func read(path: String) {
        do {
            let realm = try Realm(configuration: configuration(path, readOnly: true))
            var digest = Digest()
            let items = realm.objects(FlipItem.self)
            var count = 0
            for item in items {
                count += 1
                digest.add("\(item.id) \(item.name) \(item.blob.map { Array($0) } ?? []) \(item.score) \(item.ratio)")
                digest.add("\(item.flag) \(item.when?.timeIntervalSince1970 ?? -1) \(item.oid?.stringValue ?? "-")")
                digest.add("\(item.uuid?.uuidString ?? "-") \(item.amount.stringValue)")
                let tags: [String] = Array(item.tags), numbers: [Int] = item.numbers.sorted()
                let labels: [String] = item.labels.map { "\($0.key)=\($0.value)" }
                digest.add("\(tags) \(numbers) \(labels) \(item.tags.count) \(item.numbers.count) \(item.labels.count)")
                digest.add("\(item.tags.first ?? "-") \(item.tags.last ?? "-")")
                let friends: [Int] = item.friends.map { $0.id }, fans: [Int] = item.fans.map { $0.id }.sorted()
                digest.add("\(item.friend?.id ?? -1) \(item.friend?.name ?? "-") \(friends) \(fans)")
                let codes: [Int] = item.place.map { Array($0.codes) } ?? []
                let places: [String] = item.places.map { "\($0.city) \(Array($0.codes))" }
                digest.add("\(item.place?.city ?? "-") \(codes) \(places)")
                digest.add(describe(item.mixed, depth: 0))
            }
            digest.add(count, items.count)
            digest.add(items.filter("score > 30").count, items.filter("name BEGINSWITH 'item 1'").count,
                       items.filter("ANY tags CONTAINS '3'").count, items.filter("friend.score < 90").count,
                       items.filter("labels.@count > 2").count, items.filter("mixed['b']['c'] == 'deep'").count)
            digest.add(items.sum(ofProperty: "score") as Double, items.max(ofProperty: "when") as Date?,
                       items.min(ofProperty: "ratio") as Float?, items.average(ofProperty: "id") as Double?)
            // Arrays, not lazy maps: a lazy map's text is its base's, the whole Results in
            // Realm's description format (hundreds of KB, over the child's allocation limit).
            let topScores: [Int] = items.sorted(byKeyPath: "score", ascending: false).prefix(5).map(\.id)
            let firstNames: [Int] = items.sorted(byKeyPath: "name").prefix(5).map(\.id)
            digest.add(topScores, firstNames)
            digest.add(realm.object(ofType: FlipItem.self, forPrimaryKey: 7)?.name,
                       items.filter("name == 'item 12 ééééé'").count)
            print("read \(count) objects digest \(digest.value)")
        } catch {
            print("error: \(error)")
        }
    }

    private static func describe(_ value: AnyRealmValue, depth: Int) -> String {
        switch value {
        case .list(let list): return "[" + list.map { describe($0, depth: depth + 1) }.joined(separator: ",") + "]"
        case .dictionary(let map):
            return "{" + map.map { "\($0.key):\(describe($0.value, depth: depth + 1))" }.sorted().joined(separator: ",") + "}"
        case .object(let object): return "object \((object as? FlipItem)?.id ?? -1)"
        default: return "\(value)"
        }
    }
}

/// FNV-1a over the text of every value read.
struct Digest {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ values: Any?...) {
        for value in values {
            for byte in String(describing: value).utf8 {
                self.value = (self.value ^ UInt64(byte)) &* 0x100_0000_01b3
            }
        }
    }
}
