import Foundation
import Testing
@testable import Trellis

/// Sized integers only (an `AllTypes` has an enum, which Extended JSON does not export).
class SizedIntegers: Object {
    @Persisted var int8: Int8 = 0
    @Persisted var int16: Int16 = 0
}

/// Realm's dynamic getters hand sized integers out as `NSNumber`, so `obj["int8"] as! Int`
/// works as well as `as! Int8` (realm-swift ObjectAccessorTests `testIntSizes`).
@Suite struct SizedIntegerDynamicAccessTests {
    let folder = TemporaryFolder()

    func check(_ object: AllTypes) {
        object["int8"] = NSNumber(value: Int8(1) << 6)
        object["int16"] = NSNumber(value: Int16(1) << 12)
        object["int32"] = NSNumber(value: Int32(1) << 30)
        object["int64"] = NSNumber(value: Int64(1) << 40)
        #expect(object["int8"] as? Int == 64)
        #expect(object["int8"] as? Int8 == 64)
        #expect(object["int16"] as? Int == 4096)
        #expect(object["int32"] as? Int == 1 << 30)
        #expect(object["int64"] as? Int == 1 << 40)
        #expect(object["int64"] as? NSNumber == NSNumber(value: Int64(1) << 40))
        #expect(object.value(forKey: "int16") as? Int == 4096)
        object.setValue(-1, forKey: "int8")
        #expect(object["int8"] as? Int == -1)
        #expect(object.int8 == -1)
        object["optInt8"] = Int8(7)
        #expect(object["optInt8"] as? Int == 7)
        object["optInt8"] = nil
        #expect(object["optInt8"] as? Int == nil)
        // Int and the other types read as themselves.
        object.int = 3
        #expect(object["int"] as? Int == 3)
        #expect(object["double"] is Double)
    }

    @Test func sizedIntegersReadThroughTheSubscriptCastToInt() throws {
        check(AllTypes())
        let realm = try Realm(configuration: folder.configuration([AllTypes.self]))
        try realm.write { check(realm.create(AllTypes.self)) }
    }

    /// Trellis's own readers (Extended JSON export, copies) see the Swift value, not the NSNumber:
    /// an `Int8` of 1 stays a number, never a Bool.
    @Test func exportAndCopiesKeepSizedIntegersAsNumbers() throws {
        let object = SizedIntegers()
        object.int8 = 1
        object.int16 = 2
        let document = try ExtendedJSON.documentValue(for: object)
        #expect(document["int8"] as? [String: String] == ["$numberLong": "1"])
        #expect(document["int16"] as? [String: String] == ["$numberLong": "2"])
        let copy = SizedIntegers(value: object)
        #expect(copy.int8 == 1 && copy.int16 == 2)
    }
}
