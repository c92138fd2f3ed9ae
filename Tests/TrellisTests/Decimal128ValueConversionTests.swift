import Foundation
import Testing
import Trellis

final class PricedItem: Object {
    @Persisted var price: Decimal128
    @Persisted var discount: Decimal128?
}

/// A `Decimal128` property takes any number or a numeric string in `init(value:)`, `create`
/// and `setValue(_:forKey:)`, as in Realm (ObjectCreationTests' valid values for a decimal128
/// property are `1`, `"2"` and `Decimal128(number: 3)`); text that is no number is invalid.
/// Before, Trellis trapped "Invalid value '1' of type 'Int' for 'Decimal128' property".
@Suite struct Decimal128ValueConversionTests {
    @Test func numbersAndNumericStringsConvert() throws {
        #expect(PricedItem(value: ["price": 1]).price == Decimal128(1))
        #expect(PricedItem(value: ["price": "2.5"]).price == Decimal128(value: "2.5"))
        #expect(PricedItem(value: ["price": 1.5]).price == Decimal128(value: 1.5))
        #expect(PricedItem(value: ["price": Int8(7)]).price == Decimal128(7))
        #expect(PricedItem(value: [Decimal128(number: 3), 4]).discount == Decimal128(4))
        let realm = try Realm(configuration: .init(inMemoryIdentifier: "decimal-conversion-\(UUID().uuidString)",
                                                   objectTypes: [PricedItem.self]))
        try realm.write {
            let item = realm.create(PricedItem.self, value: ["price": 10, "discount": "0.25"])
            #expect(item.price == Decimal128(10) && item.discount == Decimal128(value: "0.25"))
            item.setValue(12, forKey: "price")
            #expect(item.price == Decimal128(12))
        }
    }

    @Test func textThatIsNoNumberIsInvalid() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = PricedItem(value: ["price": "invalid"])
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Invalid value 'invalid'"))
    }
}
