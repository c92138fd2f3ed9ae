import Foundation
import Testing
@testable import TrellisStorage

/// A commit's run of tree pages goes to the file as one gathering write (`pwritev`, issue 37;
/// docs/STORAGE.md section 4 step 2), and the pages a relaxed commit asks about when it frees
/// pages are kept as a bitmap (`PageSet`).
@Suite struct GatheredWriteTests {
    @Test func aGatheringWriteLandsEveryPieceInOrderAsOneWrite() throws {
        let folder = temporaryDirectory("gathered")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = try PosixFile(path: folder + "/file")
        defer { file.close() }
        // More pieces than one pwritev takes (1,024), of odd sizes, one of them empty.
        let pieces: [[UInt8]] = (0..<1_100).map { index in
            index == 7 ? [] : Array(repeating: UInt8(truncatingIfNeeded: index), count: 1 + index % 13)
        }
        let expected = pieces.flatMap { $0 }
        let writes = file.writeCount
        try withExtendedLifetime(pieces) {
            let buffers = pieces.map { piece in piece.withUnsafeBytes { $0 } }
            try buffers.withUnsafeBufferPointer { try file.write(gathering: $0, at: 100) }
        }
        #expect(file.writeCount == writes + 1)
        #expect(file.bytesWritten == expected.count)
        #expect(try file.size() == UInt64(100 + expected.count))
        var read = [UInt8](repeating: 0xFF, count: expected.count)
        try read.withUnsafeMutableBytes { try file.read(into: $0, at: 100) }
        #expect(read == expected)
    }

    @Test func aPageSetHoldsExactlyThePagesInserted() {
        var set = PageSet()
        #expect(set.isEmpty)
        #expect(!set.contains(0) && !set.contains(1 << 40))
        let pages: [UInt64] = [3, 63, 64, 65, 127, 128, 4_095, 100_000, 1 << 20]
        for page in pages { set.insert(page) }
        #expect(!set.isEmpty)
        for page in pages { #expect(set.contains(page), "page \(page)") }
        let absent: [UInt64] = [0, 2, 4, 62, 66, 126, 129, 4_094, 4_096, 99_999, 100_001, (1 << 20) - 1, (1 << 20) + 1, 1 << 21]
        for page in absent {
            #expect(!set.contains(page), "page \(page)")
        }
        // A copy is a value: inserting into it leaves the original as it was.
        var copy = set
        copy.insert(5)
        #expect(copy.contains(5) && !set.contains(5))
    }
}
