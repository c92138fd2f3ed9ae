import TrellisStorage

/// What a conversion writes: the trees of the new file, one per database of the LMDB file, each
/// checked before anything is written (a name the new format can hold, no sorted duplicates).
struct ConversionPlan {
    struct Tree {
        let name: String
        let database: LMDBDatabase
        /// Entries the tree receives (for the main database, its plain entries only).
        let entries: UInt64
        var order: KeyOrder { database.hasIntegerKeys ? .integer : .bytes }
    }

    let reader: LMDBFileReader
    let trees: [Tree]

    init(reader: LMDBFileReader) throws {
        self.reader = reader
        var trees: [Tree] = []
        var databases = try reader.namedDatabases()
        let plainMainEntries = try reader.plainMainEntryCount()
        if plainMainEntries > 0 {
            guard !databases.contains(where: { $0.name == LMDBUpgrade.mainDatabaseTreeName }) else {
                throw Self.unsupported(reader.mainDatabase, path: reader.path,
                                       "entries of its own, and a database named '\(LMDBUpgrade.mainDatabaseTreeName)' "
                                           + "that would receive them")
            }
            databases.append(reader.mainDatabase)
        }
        for database in databases {
            if database.hasSortedDuplicates || database.hasReversedKeys {
                // The walk gives the typed error that says why.
                try reader.forEachEntry(in: database) { _, _ in }
            }
            let name = database.isMain ? LMDBUpgrade.mainDatabaseTreeName : database.name
            guard let name, !name.isEmpty, name.utf8.count <= 255 else {
                throw Self.unsupported(database, path: reader.path,
                                       "a name that is not 1-255 bytes of UTF-8, which TrellisStorage tree names are")
            }
            trees.append(Tree(name: name, database: database,
                              entries: database.isMain ? UInt64(plainMainEntries) : database.entries))
        }
        self.trees = trees
    }

    static func unsupported(_ database: LMDBDatabase, path: String, _ detail: String) -> LMDBFormatError {
        LMDBFormatError(.unsupportedDatabase(name: database.displayName),
                        "The database '\(database.displayName)' of '\(path)' has \(detail); nothing was converted.")
    }

    // MARK: - Copying

    /// Writes every tree into a new TrellisStorage file at `destination` in one pass over the
    /// LMDB file (relaxed commits every `bytesPerCommit` bytes, then a sync and a seal at
    /// close). Returns the number of entries written.
    func copy(to destination: String, progress: (LMDBUpgrade.Step) -> Void) throws -> UInt64 {
        var options = StorageEnvironment.Options()
        options.syncOnCommit = false
        let environment = try StorageEnvironment(path: destination, options: options)
        defer { environment.close() }
        var transaction = try environment.beginWrite()
        defer { transaction.abort() }
        var written: UInt64 = 0
        var pendingBytes = 0
        for tree in trees {
            try transaction.createTree(tree.name, order: tree.order)
            var entries: UInt64 = 0
            try reader.forEachEntry(in: tree.database) { key, value in
                if value.count > StorageLimits.maximumValueLength {
                    throw Self.unsupported(tree.database, path: reader.path,
                                           "a \(value.count)-byte value, longer than TrellisStorage's "
                                               + "\(StorageLimits.maximumValueLength)")
                }
                // Keys come in the tree's order: each is appended after the last.
                try transaction.put(tree.name, key: Array(key), value: Array(value), mode: .append)
                entries += 1
                pendingBytes += key.count + value.count
                if pendingBytes >= LMDBUpgrade.bytesPerCommit {
                    try transaction.commit()
                    transaction = try environment.beginWrite()
                    pendingBytes = 0
                }
                if entries % 64 == 0 { progress(.copying(tree: tree.name, entries: entries)) }
            }
            written += entries
            progress(.copying(tree: tree.name, entries: entries))
        }
        try transaction.commit()
        try environment.sync()
        return written
    }

    // MARK: - Verifying

    /// Compares the TrellisStorage file at `path` with the LMDB file, tree by tree: the same
    /// names, key orders and entry counts, and every key and value equal, in order.
    func verify(convertedFile path: String) throws {
        let environment = try StorageEnvironment(path: path)
        defer { environment.close() }
        try environment.read { transaction in
            let names = try transaction.treeNames()
            guard names == trees.map(\.name).sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
            else {
                let missing = Set(trees.map(\.name)).symmetricDifference(names).sorted().first ?? "?"
                throw mismatch(path, tree: missing, "the converted file's trees differ from the original's databases")
            }
            for tree in trees {
                guard let info = try transaction.info(tree.name), info.order == tree.order,
                      info.count == tree.entries
                else { throw mismatch(path, tree: tree.name, "its key order or entry count differs") }
                let cursor = try transaction.cursor(tree.name)
                var more = try cursor.first()
                try reader.forEachEntry(in: tree.database) { key, value in
                    guard more else { throw mismatch(path, tree: tree.name, "it has fewer entries") }
                    let same = try cursor.withKey { $0.elementsEqual(key) } && cursor.withValue { $0.elementsEqual(value) }
                    guard same else { throw mismatch(path, tree: tree.name, "an entry differs") }
                    more = try cursor.next()
                }
                guard !more else { throw mismatch(path, tree: tree.name, "it has more entries") }
            }
        }
    }

    private func mismatch(_ path: String, tree: String, _ detail: String) -> LMDBFormatError {
        LMDBFormatError(.verificationFailed(tree: tree),
                        "The converted file '\(path)' does not hold what '\(reader.path)' holds: tree '\(tree)': "
                            + "\(detail). The original is kept; report this with both files.")
    }
}
