/// Checks that a table's column copy holds exactly its rows: each chunk rebuilt from the rows
/// must hold what the stored one holds (the same objects, null bits, slots and variable-width
/// bytes; a patched chunk may keep unused bytes, which are not compared). Part of
/// ``ConsistencyChecker``.
enum ColumnCheck {
    static func problems(of table: Table, in txn: Transaction) -> [String] {
        guard let storage = table.columns else { return [] }
        let name = ColumnStorage.name(table.info.className)
        var expected: [UInt64: ChunkBuilder] = [:]
        try? storage.forEachChunkOfRows(in: txn) { number, builder in expected[number] = builder }
        var problems: [String] = []
        var seen = Set<UInt64>()
        // The chunks as readers see them: stored, with the delta applied.
        storage.forEachChunk(in: txn) { stored, base in
            let number = base >> UInt64(storage.shift)
            seen.insert(number)
            guard let builder = expected[number] else {
                problems.append("'\(name)' has chunk \(number), but no object has a key in it")
                return true
            }
            let matches = builder.encoded().withUnsafeBytes { rebuilt in
                guard let fromRows = ColumnChunk(rebuilt, slotCount: storage.slotCount) else { return false }
                return sameContents(stored, fromRows, kinds: storage.kinds)
            }
            if !matches { problems.append("'\(name)' chunk \(number) does not hold the values of its rows") }
            return true
        }
        for number in expected.keys.sorted() where !seen.contains(number) {
            problems.append("'\(name)' lacks chunk \(number), which objects of \(table.info.className) fall in")
        }
        return problems
    }

    /// Whether two chunks hold the same objects and values.
    static func sameContents(_ a: ColumnChunk, _ b: ColumnChunk, kinds: [ColumnKind]) -> Bool {
        guard a.slotCount == b.slotCount, a.columnCount == b.columnCount else {
            return false
        }
        for word in 0..<a.wordCount where a.presence(word) != b.presence(word) { return false }
        for (column, kind) in kinds.enumerated() {
            let x = a.block(column), y = b.block(column)
            guard let x, let y else {
                if (x == nil) != (y == nil) { return false }
                continue
            }
            for word in 0..<a.wordCount {
                let present = a.presence(word)
                guard x.nullWord(word) & present == y.nullWord(word) & present else { return false }
                var values = present & ~x.nullWord(word)
                while values != 0 {
                    let index = word << 6 + values.trailingZeroBitCount
                    values &= values - 1
                    let same = kind == .variable && !x.isInRow(index) && !y.isInRow(index)
                        ? x.tail(index).elementsEqual(y.tail(index)) : x.slot(index) == y.slot(index)
                    if !same { return false }
                }
            }
        }
        return true
    }
}
