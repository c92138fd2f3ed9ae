import Testing
import TrellisTestSupport

/// The shared generator keeps the sequence every fixed seed of the randomized tests was chosen
/// with: SplitMix64's published outputs, and the remainder rule of `below`.
@Suite struct SplitMix64Tests {
    @Test func seedZeroGivesTheReferenceSequence() {
        var random = SplitMix64(seed: 0)
        #expect([random.next(), random.next(), random.next()]
            == [0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F])
    }

    @Test func boundedDrawsAreTheRemainderOfTheNextWord() {
        var words = SplitMix64(seed: 4242)
        var bounded = SplitMix64(seed: 4242)
        for bound in [1, 2, 7, 100, 1 << 20] {
            #expect(bounded.below(bound) == Int(words.next() % UInt64(bound)))
            #expect(bounded.next(upTo: bound) == Int(words.next() % UInt64(bound)))
            #expect(bounded.chance(30) == (words.next() % 100 < 30))
        }
        #expect(bounded.bytes(3) == (0..<3).map { _ in UInt8(truncatingIfNeeded: words.next()) })
    }
}
