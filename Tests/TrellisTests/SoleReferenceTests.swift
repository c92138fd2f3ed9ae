import Testing
@testable import Trellis

/// `SoleReference` answers from an object's reference-count word once the full test accepted
/// that word: its answers must be the full test's, whatever references the program makes.
@Suite struct SoleReferenceTests {
    final class Thing: ObjectBase {}
    final class Holder {
        var strong: ObjectBase?
        unowned var unownedReference: ObjectBase?
        weak var weakReference: ObjectBase?
    }

    static func fullTest(_ object: inout ObjectBase) -> Bool {
        isKnownUniquelyReferenced(&object) && _getWeakRetainCount(object) <= 1 && _getUnownedRetainCount(object) <= 1
    }

    @Test func theRuntimeKeepsCountsAsExpected() {
        #expect(SoleReference.layoutIsAsExpected)
    }

    @Test func answersAreTheFullTestsWhateverElseReferencesTheObject() {
        var sole = SoleReference()
        var first: ObjectBase = Thing()
        let learned = sole.holds(&first)  // learns this word
        #expect(learned)
        for round in 0..<6 {
            var object: ObjectBase = Thing()
            let holder = Holder()
            switch round {
            case 0: holder.strong = object
            case 1: holder.unownedReference = object
            case 2: holder.weakReference = object
            case 3:
                // A weak reference made and dropped leaves a side table behind.
                holder.weakReference = object
                holder.weakReference = nil
            case 4: break
            default: holder.strong = object; holder.strong = nil
            }
            let expected = Self.fullTest(&object)
            let answer = sole.holds(&object), again = sole.holds(&object)
            #expect(answer == expected, "round \(round)")
            #expect(again == expected, "round \(round), asked again")
            withExtendedLifetime(holder) {}
        }
    }

    @Test func anObjectWithASideTableIsAskedInFullEachTime() {
        // Once a weak reference was made, the counts live in a side table and the word stays the
        // same whatever happens to them: it must never be learned.
        var sole = SoleReference()
        var object: ObjectBase = Thing()
        let holder = Holder()
        holder.weakReference = object
        holder.weakReference = nil
        let alone = sole.holds(&object)
        #expect(alone == Self.fullTest(&object))
        holder.strong = object
        let shared = sole.holds(&object)
        #expect(!shared)
        withExtendedLifetime(holder) {}
    }
}
