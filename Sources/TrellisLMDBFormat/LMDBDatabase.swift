/// One database of an LMDB file: the main database, or a named one.
public struct LMDBDatabase: Sendable, Equatable {
    /// The name's bytes (LMDB names are bytes); empty for the main database.
    public let nameBytes: [UInt8]
    /// Whether this is the main database (whose leaves also list the named ones).
    public let isMain: Bool
    /// `MDB_db.md_flags`: `MDB_INTEGERKEY` 0x08, `MDB_DUPSORT` 0x04, `MDB_REVERSEKEY` 0x02, …
    public let flags: UInt16
    /// Entries, as the database record counts them (checked against the pages by a walk).
    public let entries: UInt64
    /// Levels of the tree (0 when empty).
    public let depth: Int
    let record: DatabaseRecord

    /// The name as text: nil when it is not UTF-8 (or for the main database).
    public var name: String? {
        if isMain { return nil }
        let text = String(decoding: nameBytes, as: UTF8.self)
        return Array(text.utf8) == nameBytes ? text : nil
    }

    /// A name to show: the text, or the bytes in hexadecimal when they are not UTF-8.
    public var displayName: String {
        if isMain { return "(main database)" }
        return name ?? nameBytes.map { String($0, radix: 16) }.joined(separator: " ")
    }

    /// Keys are native unsigned integers of 4 or 8 bytes (`MDB_INTEGERKEY`).
    public var hasIntegerKeys: Bool { flags & LMDBLayout.integerKeys != 0 }
    /// Several sorted values per key (`MDB_DUPSORT`).
    public var hasSortedDuplicates: Bool { flags & LMDBLayout.sortedDuplicates != 0 }
    /// Keys compared from their last byte (`MDB_REVERSEKEY`).
    public var hasReversedKeys: Bool { flags & LMDBLayout.reverseKeys != 0 }

    init(nameBytes: [UInt8], isMain: Bool, record: DatabaseRecord) {
        self.nameBytes = nameBytes
        self.isMain = isMain
        self.record = record
        flags = record.flags
        entries = record.entries
        depth = record.depth
    }
}
