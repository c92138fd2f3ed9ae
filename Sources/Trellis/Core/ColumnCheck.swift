/// Checks that a table's column copy holds exactly its rows: the chunks rebuilt from the rows
/// must equal the stored ones byte for byte (a chunk's encoding depends only on the values it
/// holds, not on the writes that led to them). Part of ``ConsistencyChecker``.
enum ColumnCheck {
    static func problems(of table: Table, in txn: Transaction) -> [String] {
        guard let storage = table.columns else { return [] }
        let name = ColumnStorage.name(table.info.className)
        var expected: [UInt64: ChunkBuilder] = [:]
        if let cursor = txn.existingCursor(table.rows) {
            var entry = cursor.first()
            while let (rawKey, bytes) = entry {
                let key = Cursor.integerKey(rawKey)
                let number = key >> UInt64(storage.shift)
                let builder = expected[number] ?? ChunkBuilder(slotCount: storage.slotCount, kinds: storage.kinds)
                builder.set(Int(key & UInt64(storage.slotCount - 1)), row: RowView(bytes: bytes))
                expected[number] = builder
                entry = cursor.next()
            }
        }
        var problems: [String] = []
        var seen = Set<UInt64>()
        if let cursor = txn.existingCursor(storage.database) {
            var entry = cursor.first()
            while let (rawKey, bytes) = entry {
                let number = Cursor.integerKey(rawKey)
                seen.insert(number)
                if let builder = expected[number] {
                    if !builder.encoded().elementsEqual(bytes) {
                        problems.append("'\(name)' chunk \(number) does not hold the values of its rows")
                    }
                } else {
                    problems.append("'\(name)' has chunk \(number), but no object has a key in it")
                }
                entry = cursor.next()
            }
        }
        for number in expected.keys.sorted() where !seen.contains(number) {
            problems.append("'\(name)' lacks chunk \(number), which objects of \(table.info.className) fall in")
        }
        return problems
    }
}
