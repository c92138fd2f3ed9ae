import Foundation
import Testing
@testable import Trellis

@Suite struct ObjectIdTests {
    @Test func objectIdInitIsZero() {
        #expect(ObjectId().stringValue == "000000000000000000000000")
    }

    @Test func generatedObjectIdsAreUniqueAndIncreasing() {
        let ids = (0..<1000).map { _ in ObjectId.generate() }
        #expect(Set(ids).count == 1000)
        #expect(ids == ids.sorted())
    }

    @Test func objectIdRoundTripsThroughItsString() throws {
        let id = ObjectId.generate()
        #expect(try ObjectId(string: id.stringValue) == id)
        #expect(try ObjectId(string: "5F1B2C3D4E5F60718293A4B5").stringValue == "5f1b2c3d4e5f60718293a4b5")
    }

    @Test(arguments: ["", "xyz", "5f1b2c3d4e5f60718293a4b", "5f1b2c3d4e5f60718293a4bz", "5f1b2c3d4e5f60718293a4b5ff"])
    func objectIdFromBadHexThrowsInvalidValue(text: String) {
        #expect(throws: Realm.Error.self) { try ObjectId(string: text) }
        do {
            _ = try ObjectId(string: text)
        } catch let error as Realm.Error {
            #expect(error.code == .invalidValue)
            #expect(error.message.contains("24 hexadecimal characters"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func objectIdIsCodableAsItsHexString() throws {
        let id = ObjectId.generate()
        let json = try JSONEncoder().encode([id])
        #expect(String(decoding: json, as: UTF8.self) == "[\"\(id.stringValue)\"]")
        #expect(try JSONDecoder().decode([ObjectId].self, from: json) == [id])
    }

    @Test func objectIdTimestampIsCreationSecond() {
        let before = Date().timeIntervalSince1970.rounded(.down)
        let id = ObjectId.generate()
        #expect(abs(id.timestamp.timeIntervalSince1970 - before) <= 1)
    }

    @Test func decimal128ParsesComparesAndComputesExactly() throws {
        let price = try Decimal128(string: "19.99")
        #expect((price * 3).stringValue == "59.97")
        #expect(Decimal128(1) < price)
        #expect(throws: Realm.Error.self) { try Decimal128(string: "12abc") }
        #expect(try Decimal128(string: "NaN").isNaN)
    }
}
