/// A set of page numbers kept as a bitmap (bit `n % 64` of word `n / 64` for page `n`): the pages
/// this process's relaxed commits wrote since the durable commit (`StorageEnvironment`), which a
/// commit asks about for each page it frees (`FreeTreeUpdate`, the `ownWrites` section).
///
/// A lookup is a shift and a mask where a `Set<UInt64>` hashed every page (~100 instructions a
/// lookup and ~170 an insert; issue 37). The pages are those of the file, so the words number
/// at most the file's pages / 64 (a 1 GiB file: 4,096 words), and the set is emptied at each
/// sync.
struct PageSet {
    private var words: [UInt64] = []
    /// Whether no page was ever inserted.
    private(set) var isEmpty = true

    func contains(_ page: UInt64) -> Bool {
        let index = page >> 6
        guard index < UInt64(words.count) else { return false }
        return words[Int(index)] & (1 &<< (page & 63)) != 0
    }

    mutating func insert(_ page: UInt64) {
        let index = Int(page >> 6)
        if index >= words.count {
            // Geometric, so that a file growing page by page regrows the words rarely.
            words.append(contentsOf: repeatElement(0, count: max(index + 1, words.count * 2) - words.count))
        }
        words[index] |= 1 &<< (page & 63)
        isEmpty = false
    }
}
