import Testing
@testable import TrellisStorage

@Suite struct ChecksumTests {
    /// XXH64 reference values (seed 0) from the algorithm's published test vectors.
    @Test func xxh64MatchesReferenceVectors() {
        func hash(_ text: String) -> UInt64 { Array(text.utf8).withUnsafeBytes { Checksum.xxh64($0) } }
        #expect(hash("") == 0xEF46_DB37_51D8_E999)
        #expect(hash("a") == 0xD24E_C4F1_A98C_6E5B)
        #expect(hash("abc") == 0x44BC_2CF5_AD77_0999)
    }
}
