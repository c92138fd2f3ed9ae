import Foundation
import Testing
@testable import Trellis

/// Freezing an unmanaged collection traps with Realm's message, which names Realm's class for
/// the collection (MutableSetUnmanagedRealmCollectionTests.testFreeze: "…RLMSet…"; Trellis
/// named RLMArray for every kind).
@Suite struct UnmanagedFreezeMessageTests {
    @Test func freezingAnUnmanagedListNamesRLMArray() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = List<Int>().freeze()
        }
        #expect(exitTestStandardError(result).contains(
            "This method may only be called on RLMArray instances retrieved from an RLMRealm"))
    }

    @Test func freezingAnUnmanagedSetNamesRLMSet() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = MutableSet<Int>().freeze()
        }
        #expect(exitTestStandardError(result).contains(
            "This method may only be called on RLMSet instances retrieved from an RLMRealm"))
    }

    @Test func freezingAnUnmanagedMapNamesRLMDictionary() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Map<String, Int>().freeze()
        }
        #expect(exitTestStandardError(result).contains(
            "This method may only be called on RLMDictionary instances retrieved from an RLMRealm"))
    }
}
