import Testing
@testable import TrellisStorage

@Suite struct ChecksumTests {
    /// XXH64 reference values (seed 0) from the algorithm's published test vectors.
    @Test func xxh64MatchesReferenceVectors() {
        func hash(_ text: String) -> UInt64 { Array(text.utf8).withUnsafeBytes { Checksum.xxh64($0) } }
        #expect(hash("") == 0xEF46_DB37_51D8_E999)
        #expect(hash("a") == 0xD24E_C4F1_A98C_6E5B)
        #expect(hash("abc") == 0x44BC_2CF5_AD77_0999)
        #expect(hash("Nobody inspects the spammish repetition") == 0xFBCE_A83C_8A37_8BF1)
    }

    /// Lengths around the 32- and 64-byte stripes (the main loop takes two stripes a turn, then
    /// one, then the 8/4/1-byte tails) and a whole page, bytes `(7i + 3) mod 256`. Expected values
    /// from a plain transcription of the specification (one stripe a turn) that gives the
    /// published vectors above.
    @Test(arguments: [(31, 0xA2AA_5F33_CC4A_6119), (32, 0x23C3_C17E_F790_FD97), (63, 0x5E3E_54B4_31C7_493C),
                      (64, 0x0EB6_4B3E_F6EE_B01F), (95, 0xF6FF_B910_3991_895F), (96, 0x3101_A958_DE58_2E18),
                      (127, 0x0C2B_3713_C3ED_BEB3), (128, 0x46FB_CFBF_0150_793F), (160, 0xA1A7_532B_0F93_C746),
                      (4096, 0x7963_98CD_4327_97CC), (4100, 0x3A82_44D7_37A2_6FAD)] as [(Int, UInt64)])
    func xxh64OfLongInputsMatchesTheSpecification(length: Int, expected: UInt64) {
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        #expect(bytes.withUnsafeBytes { Checksum.xxh64($0) } == expected)
    }

    /// An overflow run's checksum is computed from its kept value without the zeros after it
    /// (`xxh64(_:zeroPaddedTo:)`): it must equal the XXH64 of the run with its zeros in memory,
    /// for values ending anywhere in a stripe, on a stripe boundary, and filling the pages.
    @Test(arguments: [0, 1, 31, 32, 33, 63, 64, 4064, 4065, 4096, 8191, 8192])
    func zeroPaddedChecksumEqualsTheChecksumOfThePaddedBytes(length: Int) {
        let total = max(1, (length + 4095) / 4096) * 4096
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        let padded = bytes + [UInt8](repeating: 0, count: total - length)
        let streamed = bytes.withUnsafeBytes { Checksum.xxh64($0, zeroPaddedTo: total) }
        #expect(streamed == padded.withUnsafeBytes { Checksum.xxh64($0) })
    }
}
