/// SplitMix64 (Steele, Lea and Flood's generator, the constants of Vigna's reference code): a
/// small seeded generator, so every randomized test and process helper names a seed that replays
/// its failure. The one copy for the test targets and the process helpers; a fixed seed gives the
/// same sequence it gave each of the four copies this replaces.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound` (`bound` > 0), by remainder: cheap, slightly uneven for large
    /// bounds, and the sequence the seeds of existing tests were chosen with.
    public mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0, "SplitMix64.below needs a bound above 0, not \(bound)")
        return Int(next() % UInt64(bound))
    }

    /// `below(bound)` under the name the process helpers use.
    public mutating func next(upTo bound: Int) -> Int { below(bound) }

    /// True in about `percent` of 100 calls.
    public mutating func chance(_ percent: Int) -> Bool { below(100) < percent }

    /// `count` random bytes, one draw each.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) }
    }
}
