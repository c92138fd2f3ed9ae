import Foundation
import Testing
import Trellis

/// Realm's `objects(at:)` on an unmanaged `List` or `MutableSet` answers from its elements
/// (Realm's PrimitiveListTests.testObjectsAtIndexes runs on unmanaged lists too): the elements at
/// the indexes in order, and an index past the end traps "Indexes for collection are out of
/// bounds.". Before, Trellis trapped "This method may only be called on RLMArray instances
/// retrieved from an RLMRealm" for any unmanaged collection.
@Suite struct UnmanagedObjectsAtIndexesTests {
    @Test func anUnmanagedListGivesTheElementsAtTheIndexes() {
        let list = List<Int>()
        list.append(objectsIn: [10, 20, 30])
        #expect(list.objects(at: IndexSet([2, 0])) == [10, 30])
        let set = MutableSet<String>()
        set.insert("a")
        #expect(set.objects(at: IndexSet([0])) == ["a"])
    }

    @Test func anIndexPastTheEndTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = List<Int>().objects(at: IndexSet([1, 2, 3]))
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Indexes for collection are out of bounds."))
    }
}
