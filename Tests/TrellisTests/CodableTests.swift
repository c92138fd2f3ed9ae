import Foundation
import Testing
@testable import Trellis

final class CodableAddress: EmbeddedObject, Codable {
    @Persisted var city = ""
}

final class CodablePet: Object, Codable {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var age: Int?
    @Persisted var price: Decimal128 = 0
    @Persisted var tags: List<String>
    @Persisted var scores: MutableSet<Int>
    @Persisted var notes: Map<String, String>
    @Persisted var address: CodableAddress?
}

/// Objects, embedded objects and collections are Codable when unmanaged, as in Realm.
@Suite struct CodableTests {
    @Test func unmanagedObjectsRoundTripThroughJSON() throws {
        let pet = CodablePet()
        pet._id = ObjectId("6546a0b7c2a9ba4cb3f0e1a2")
        pet.name = "rex"
        pet.age = 3
        pet.price = Decimal128(stringLiteral: "12.50")
        pet.tags.append(objectsIn: ["a", "b"])
        pet.scores.insert(7)
        pet.notes["vet"] = "Oslo"
        pet.address = CodableAddress(value: ["city": "Bergen"])
        let data = try JSONEncoder().encode(pet)
        let decoded = try JSONDecoder().decode(CodablePet.self, from: data)
        #expect(decoded._id == pet._id)
        #expect(decoded.name == "rex" && decoded.age == 3)
        #expect(decoded.price == Decimal128(stringLiteral: "12.50"))
        #expect(Array(decoded.tags) == ["a", "b"])
        #expect(Array(decoded.scores) == [7])
        #expect(decoded.notes["vet"] == "Oslo")
        #expect(decoded.address?.city == "Bergen")
        #expect(decoded.realm == nil)
    }

    @Test func missingKeysKeepTheirDefaults() throws {
        let decoded = try JSONDecoder().decode(CodablePet.self, from: Data(#"{"name": "max"}"#.utf8))
        #expect(decoded.name == "max")
        #expect(decoded.age == nil)
        #expect(decoded.tags.isEmpty)
    }

    @Test func encodingAManagedObjectIsAnErrorWithRealmsMessage() throws {
        let folder = TemporaryFolder()
        let realm = try Realm(configuration: folder.configuration([CodablePet.self, CodableAddress.self]))
        let pet = CodablePet()
        pet.name = "rex"
        try realm.write { realm.add(pet) }
        let read = try #require(realm.objects(CodablePet.self).first)
        for object in [pet, read] {
            #expect {
                _ = try JSONEncoder().encode(object)
            } throws: { error in
                guard case EncodingError.invalidValue(_, let context) = error else { return false }
                return context.debugDescription.hasPrefix("Only unmanaged Realm objects can be encoded")
            }
        }
        // A managed list still encodes its elements, as in Realm.
        try realm.write { pet.tags.append("x") }
        #expect(String(decoding: try JSONEncoder().encode(read.tags), as: UTF8.self) == #"["x"]"#)
    }
}

final class Stamped: Object, Codable {
    @Persisted var when = Date(timeIntervalSince1970: 0)
    @Persisted var blob = Data()
    @Persisted var whenList: List<Date>
    @Persisted var maybe: Date?
    @Persisted var firstName = ""
}

@Suite struct CodableStrategyTests {
    @Test func datesAndDataFollowTheEncodersStrategies() throws {
        let stamped = Stamped()
        stamped.when = Date(timeIntervalSince1970: 86_400)
        stamped.blob = Data([1, 2, 3])
        stamped.whenList.append(Date(timeIntervalSince1970: 0))
        stamped.maybe = nil
        stamped.firstName = "Ann"
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.dataEncodingStrategy = .base64
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys]
        let json = String(decoding: try encoder.encode(stamped), as: UTF8.self)
        #expect(json.contains(#""when":"1970-01-02T00:00:00Z""#), "\(json)")
        #expect(json.contains(#""blob":"AQID""#), "\(json)")
        #expect(json.contains(#""when_list":["1970-01-01T00:00:00Z"]"#), "\(json)")
        #expect(json.contains(#""first_name":"Ann""#), "\(json)")
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        decoder.dataDecodingStrategy = .base64
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let back = try decoder.decode(Stamped.self, from: Data(json.utf8))
        #expect(back.when == stamped.when)
        #expect(back.blob == stamped.blob)
        #expect(Array(back.whenList) == [Date(timeIntervalSince1970: 0)])
        #expect(back.firstName == "Ann")
    }
}
