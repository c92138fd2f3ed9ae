import Foundation
import Testing
import Trellis

enum RawValueShade: Int, PersistableEnum { case light = 1, dark = 3 }
enum RawValueTaste: String, PersistableEnum { case sweet, sour }

final class RawValueEnumHolder: Object {
    @Persisted var shade = RawValueShade.light
    @Persisted var optionalShade: RawValueShade?
    @Persisted var taste = RawValueTaste.sweet
}

/// An enum property takes its raw value in `init(value:)`, `create(_:value:)` and
/// `setValue(_:forKey:)`, as in Realm (PersistableEnum's `_rlmFromObjc` reads the raw value):
/// Realm's ObjectCreationTests.testInitWithArray/testInitWithDictionary give `IntEnum`'s
/// `rawValue` (an `Int`, or an `NSNumber` from a dictionary). Before, Trellis trapped "Invalid
/// value '1' of type 'Int' for 'IntEnum' property". A raw value that is no case stays invalid.
@Suite struct PersistableEnumRawValueTests {
    @Test func rawValuesInitializeEnumProperties() throws {
        let fromArray = RawValueEnumHolder(value: [3, 1, "sour"])
        #expect(fromArray.shade == .dark)
        #expect(fromArray.optionalShade == .light)
        #expect(fromArray.taste == .sour)
        let fromDictionary = RawValueEnumHolder(value: ["shade": NSNumber(value: 3), "optionalShade": NSNull(),
                                                        "taste": "sweet"])
        #expect(fromDictionary.shade == .dark)
        #expect(fromDictionary.optionalShade == nil)
        let realm = try Realm(configuration: .init(inMemoryIdentifier: "enum-raw-\(UUID().uuidString)",
                                                   objectTypes: [RawValueEnumHolder.self]))
        try realm.write {
            let created = realm.create(RawValueEnumHolder.self, value: ["shade": 3, "optionalShade": 3])
            #expect(created.shade == .dark && created.optionalShade == .dark)
            created.setValue(1, forKey: "shade")
            #expect(created.shade == .light)
        }
    }

    @Test func aRawValueThatIsNoCaseIsInvalid() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RawValueEnumHolder(value: ["shade": 2])
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Invalid value '2'"))
    }
}
