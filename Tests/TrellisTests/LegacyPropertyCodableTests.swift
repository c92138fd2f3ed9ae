import Foundation
import Testing
import Trellis

/// Realm's `RealmOptional` and `RealmProperty` are Codable as their bare value (Realm's
/// CodableTests: `decode(RealmOptional<Bool>.self, "[true]").value == true`, `"[null]"` is nil,
/// and encoding gives `[true]` / `[null]`).
@Suite struct LegacyPropertyCodableTests {
    @Test func realmOptionalEncodesAndDecodesAsItsValue() throws {
        let decoded = try JSONDecoder().decode([RealmOptional<Int>].self, from: Data("[5, null]".utf8))
        #expect(decoded.map(\.value) == [5, nil])
        let encoded = try JSONEncoder().encode([RealmOptional<Bool>(true), RealmOptional<Bool>()])
        #expect(String(decoding: encoded, as: UTF8.self) == "[true,null]")
    }

    @Test func realmPropertyEncodesAndDecodesAsItsValue() throws {
        let decoded = try JSONDecoder().decode([RealmProperty<Int?>].self, from: Data("[7, null]".utf8))
        #expect(decoded.map(\.value) == [7, nil])
        let property = RealmProperty<Double?>()
        property.value = 2.5
        #expect(String(decoding: try JSONEncoder().encode([property]), as: UTF8.self) == "[2.5]")
    }
}
