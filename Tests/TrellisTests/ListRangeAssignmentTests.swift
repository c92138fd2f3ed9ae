import Foundation
import Testing
@testable import Trellis

/// Realm's `List.subscript(bounds:)` setter replaces the range with the new elements, whatever
/// their number (realm-swift `List.swift`: `replaceSubrange(bounds…, with: newValue)`; its
/// ListTests.testSubscript assigns a two-element slice to `list[1..<4]`). `MutableCollection`'s
/// default setter traps on a slice of another length.
@Suite struct ListRangeAssignmentTests {
    final class RangeAssignedNumbers: Object {
        @Persisted var values: List<Int>
    }

    @Test func assigningAShorterSliceToARangeReplacesTheRangeInAnUnmanagedList() {
        let list = List<Int>()
        list.append(objectsIn: [0, 1, 2, 3, 4])
        let other = List<Int>()
        other.append(objectsIn: [10, 11, 12])
        list[1..<4] = other[0..<2]
        #expect(Array(list) == [0, 10, 11, 4])
        list[0..<1] = other[0..<3]
        #expect(Array(list) == [10, 11, 12, 10, 11, 4])
        #expect(Array(list[2..<4]) == [12, 10])
    }

    @Test func assigningASliceToARangeReplacesTheRangeInAManagedList() throws {
        let folder = TemporaryFolder()
        let realm = try Realm(configuration: folder.configuration([RangeAssignedNumbers.self]))
        let numbers = RangeAssignedNumbers()
        numbers.values.append(objectsIn: [0, 1, 2, 3, 4])
        let other = RangeAssignedNumbers()
        other.values.append(objectsIn: [10, 11, 12])
        try realm.write {
            realm.add(numbers)
            realm.add(other)
            numbers.values[1..<4] = other.values[0..<2]
        }
        #expect(Array(numbers.values) == [0, 10, 11, 4])
        try realm.write { numbers.values[2..<2] = other.values[1..<3] }
        #expect(Array(numbers.values) == [0, 10, 11, 12, 11, 4])
    }
}
