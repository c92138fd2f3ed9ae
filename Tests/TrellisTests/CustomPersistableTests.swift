import Foundation
import Testing
@testable import Trellis

/// A URL stored as its string (the conversion back may fail).
extension URL: FailableCustomPersistable {
    public typealias PersistedType = String
    public init?(persistedValue: String) { self.init(string: persistedValue) }
    public var persistableValue: String { absoluteString }
}

/// Money stored as a Decimal128.
struct Money: CustomPersistable, Hashable, Codable {
    typealias PersistedType = Decimal128
    var amount: Decimal128
    init(_ amount: Decimal128) { self.amount = amount }
    init(persistedValue: Decimal128) { amount = persistedValue }
    var persistableValue: Decimal128 { amount }
}

/// A location-like value stored as an embedded object.
struct Coordinates: CustomPersistable, Hashable {
    typealias PersistedType = CoordinatesObject
    var latitude: Double
    var longitude: Double
    init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
    init(persistedValue: CoordinatesObject) {
        latitude = persistedValue.latitude
        longitude = persistedValue.longitude
    }
    var persistableValue: CoordinatesObject {
        CoordinatesObject(value: ["latitude": latitude, "longitude": longitude])
    }
}

class CoordinatesObject: EmbeddedObject {
    @Persisted var latitude = 0.0
    @Persisted var longitude = 0.0
}

class Shop: Object {
    @Persisted var name = ""
    @Persisted var homepage: URL?
    @Persisted var price = Money(Decimal128(0))
    @Persisted var prices: List<Money>
    @Persisted var mirrors: MutableSet<URL>
    @Persisted var links: Map<String, URL>
    @Persisted var location: Coordinates?
}

@Suite struct CustomPersistableTests {
    let folder = TemporaryFolder()

    func shops() throws -> Realm {
        let realm = try Realm(configuration: folder.configuration([Shop.self, CoordinatesObject.self]))
        try realm.write {
            for (index, name) in ["a", "b", "c"].enumerated() {
                let shop = Shop()
                shop.name = name
                shop.homepage = URL(string: "https://\(name).example/")
                shop.price = Money(Decimal128(value: index * 10))
                shop.prices.append(objectsIn: [Money(Decimal128(1)), Money(Decimal128(value: index))])
                shop.mirrors.insert(URL(string: "https://mirror.\(name).example/")!)
                shop.links["home"] = URL(string: "https://\(name).example/home")!
                shop.location = Coordinates(latitude: Double(index), longitude: 10)
                realm.add(shop)
            }
        }
        return realm
    }

    @Test func customTypesRoundTripInPropertiesAndCollections() throws {
        let realm = try shops()
        let b = try #require(realm.objects(Shop.self).filter("name == 'b'").first)
        #expect(b.homepage == URL(string: "https://b.example/"))
        #expect(b.price == Money(Decimal128(10)))
        #expect(Array(b.prices) == [Money(Decimal128(1)), Money(Decimal128(1))])
        #expect(b.mirrors.contains(URL(string: "https://mirror.b.example/")!))
        #expect(b.links["home"] == URL(string: "https://b.example/home"))
        #expect(b.location == Coordinates(latitude: 1, longitude: 10))
        // Stored as the persisted type: the schema says string / decimal / embedded object.
        let schema = try #require(realm.schema["Shop"])
        #expect(schema["homepage"]?.type == .string)
        #expect(schema["price"]?.type == .decimal128)
        #expect(schema["location"]?.type == .object)
    }

    @Test func customTypesAreQueriedAndSortedByTheirPersistedValue() throws {
        let realm = try shops()
        let shops = realm.objects(Shop.self)
        let target = URL(string: "https://c.example/")!
        #expect(shops.where { $0.homepage == target }.map(\.name) == ["c"])
        #expect(shops.filter("homepage == %@", target).count == 1)
        #expect(shops.filter("price > %@", Money(Decimal128(5))).count == 2)
        #expect(Array(shops.sorted(byKeyPath: "price", ascending: false)).map(\.name) == ["c", "b", "a"])
        let maximum: Money? = shops.max(ofProperty: "price")
        #expect(maximum == Money(Decimal128(20)))
        #expect(shops.filter("location.latitude >= 1").count == 2)
    }

    @Test func dynamicAccessTakesTheCustomValueOrItsPersistedValue() throws {
        let realm = try shops()
        let shop = try #require(realm.objects(Shop.self).first)
        try realm.write {
            shop["homepage"] = URL(string: "https://dynamic.example/")
            shop["price"] = Decimal128(value: 7)
        }
        #expect(shop.homepage == URL(string: "https://dynamic.example/"))
        #expect(shop.price == Money(Decimal128(value: 7)))
        try realm.write { shop["homepage"] = "https://persisted.example/" }
        #expect(shop.homepage == URL(string: "https://persisted.example/"))
    }

    @Test func anOptionalPropertyReadsNilWhenTheStoredValueDoesNotConvert() throws {
        // The same class, once with the stored type, writes a string that is no URL.
        let configuration = folder.configuration([RawSite.self])
        do {
            let raw = try Realm(configuration: configuration)
            try raw.write { raw.create(RawSite.self, value: ["url": "http://[bad"]) }
        }
        let realm = try Realm(configuration: folder.configuration([Site.self]))
        let site = try #require(realm.objects(Site.self).first)
        #expect(site.url == nil)
    }

    @Test func aNonOptionalPropertyWhoseStoredValueDoesNotConvertTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TemporaryFolder()
            if let raw = try? Realm(configuration: folder.configuration([RawStrictSite.self])) {
                try? raw.write { raw.create(RawStrictSite.self, value: ["url": "http://[bad"]) }
            }
            let realm = try? Realm(configuration: folder.configuration([StrictSite.self]))
            _ = realm?.objects(StrictSite.self).first?.url
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Failed to convert persisted value 'http://[bad' to type 'URL' in a non-optional context."))
    }
}

class Site: Object { @Persisted var url: URL? }
class RawSite: Object {
    override class func className() -> String { "Site" }
    @Persisted var url: String?
}
class StrictSite: Object { @Persisted var url = URL(string: "https://x.example/")! }
class RawStrictSite: Object {
    override class func className() -> String { "StrictSite" }
    @Persisted var url = ""
}
