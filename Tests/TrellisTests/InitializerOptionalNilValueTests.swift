import Foundation
import Testing
import Trellis

final class NilValuesHolder: Object {
    @Persisted var name: String?
    @Persisted var count: Int?
    @Persisted var tags: List<String>
    @Persisted var scores: Map<String, Int?>
}

/// Values read from a dictionary by name come as `Any?` (`properties.map { values[$0.name] }`):
/// an `Optional<Any>.none` in the array given to `init(value:)` is nil, as `NSNull` is, and a
/// nil collection is an empty one (Realm's ModernObjectCreationTests.testInitWithArray). Before,
/// Trellis trapped "Invalid value 'nil' of type 'Optional<Any>' for 'Map<String, …>' property".
@Suite struct InitializerOptionalNilValueTests {
    @Test func anOptionalNoneIsNilAndANilCollectionEmpty() {
        let values: [String: Any] = ["name": "a"]
        let names = ["name", "count", "tags", "scores"]
        let array: [Any?] = names.map { values[$0] }
        let object = NilValuesHolder(value: array as [Any])
        #expect(object.name == "a")
        #expect(object.count == nil)
        #expect(object.tags.isEmpty)
        #expect(object.scores.isEmpty)
    }
}
