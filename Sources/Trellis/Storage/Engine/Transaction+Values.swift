// The TrellisStorage build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=trellis, see Package.swift).
#if !TRELLIS_LMDB
import Foundation
import TrellisStorage

/// Values: reads (in place, near the last key, or searched from a kept root index), puts and
/// deletes, through the tree accesses the transaction looked up (Transaction.swift).
extension Transaction {
    /// The value stored under `key`, in place, or nil.
    @inline(__always)
    func get(_ dbi: DatabaseHandle, key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard let access = access(dbi) else { return nil }
        do {
            return try access.value(forKey: key)
        } catch {
            noteReadFailure(error, "reading a value")
            return nil
        }
    }

    @inline(__always)
    func get(_ dbi: DatabaseHandle, integerKey: UInt64) -> UnsafeRawBufferPointer? {
        var key = integerKey.littleEndian
        return withUnsafeBytes(of: &key) { get(dbi, key: $0) }
    }

    /// The value under an integer key, for lookups near the one before (link hops, list
    /// elements). In a read snapshot the leaf page the last such lookup landed on is kept
    /// (``keptLeaves``): a key in its range is read from it in place, without a descent.
    @inline(__always)
    func get(_ dbi: DatabaseHandle, nearIntegerKey key: UInt64) -> UnsafeRawBufferPointer? {
        if isShared || !isReadOnly { return get(dbi, integerKey: key) }
        if let kept = keptLeaves.0, kept.database == dbi, let answer = kept.leaf.lookup(key).answer { return answer }
        if let kept = keptLeaves.1, kept.database == dbi, let answer = kept.leaf.lookup(key).answer { return answer }
        return keepLeaf(dbi, integerKey: key)
    }

    /// Descends to the leaf of `key`, keeps it, and answers from it (or from the tree when it
    /// cannot: an overflow value).
    private func keepLeaf(_ dbi: DatabaseHandle, integerKey key: UInt64) -> UnsafeRawBufferPointer? {
        guard let access = access(dbi) else { return nil }
        var keyValue = key.littleEndian
        let page: LeafPage?
        do {
            page = try withUnsafeBytes(of: &keyValue) { try access.leaf(containing: $0) }
        } catch {
            noteReadFailure(error, "reading a value")
            return nil
        }
        guard let page, let leaf = KeptIntegerLeaf(page) else { return get(dbi, integerKey: key) }
        let kept = KeptLeaf(database: dbi, leaf: leaf)
        keptLeaves = keptLeaves.0?.database == dbi ? (kept, keptLeaves.1) : (kept, keptLeaves.0)
        return leaf.lookup(key).answer ?? get(dbi, integerKey: key)
    }

    /// The value under a byte key, for lookups near the one before (a collection's header and
    /// chunks, and those of the next object): in a read snapshot, read from the leaf page the
    /// last such lookup landed on when the key is in its range.
    @inline(__always)
    func get(_ dbi: DatabaseHandle, nearKey key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        if isShared || !isReadOnly { return get(dbi, key: key) }
        if keptBytesLeaf?.database == dbi, let answer = keptBytesLeaf?.leaf.lookup(key).answer { return answer }
        guard let access = access(dbi), access.keyOrder == .bytes else { return get(dbi, key: key) }
        let page: LeafPage?
        do {
            page = try access.leaf(containing: key)
        } catch {
            noteReadFailure(error, "reading a value")
            return nil
        }
        guard let page, var leaf = KeptBytesLeaf(page) else { return get(dbi, key: key) }
        let answer = leaf.lookup(key).answer
        keptBytesLeaf = KeptLeaf(database: dbi, leaf: leaf)
        return answer ?? get(dbi, key: key)
    }

    /// The value under `key`, for lookups with no order to them (primary keys). A read snapshot
    /// not shared between threads has the engine read the root of a tree it searches often into
    /// memory and start later searches below it (`TreeAccess.searchedValue(forKey:indexing:)`,
    /// the index kept with the snapshot's access to the tree: forgotten with it at end, suspend,
    /// renew and drop).
    /// A tree searched before is searched through its access not retained (as puts are).
    @inline(__always)
    func get(_ dbi: DatabaseHandle, searchingKey key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        if let access = unretainedLookedUp(dbi) {
            // Not shared: `unretainedLookedUp` answers only then.
            return access._withUnsafeGuaranteedRef { searchedValue(in: $0, forKey: key, indexing: isReadOnly) }
        }
        guard let access = access(dbi) else { return nil }
        return searchedValue(in: access, forKey: key, indexing: isReadOnly && !isShared)
    }

    /// `access.searchedValue(forKey:indexing:)`, a damaged page noted as the read failure (nil).
    @inline(__always)
    private func searchedValue(in access: TreeAccess, forKey key: UnsafeRawBufferPointer,
                               indexing: Bool) -> UnsafeRawBufferPointer?
    {
        do {
            return try access.searchedValue(forKey: key, indexing: indexing)
        } catch {
            noteReadFailure(error, "reading a value")
            return nil
        }
    }

    @inline(__always)
    func get(_ dbi: DatabaseHandle, searchingIntegerKey integerKey: UInt64) -> UnsafeRawBufferPointer? {
        var key = integerKey.littleEndian
        return withUnsafeBytes(of: &key) { get(dbi, searchingKey: $0) }
    }

    /// The name of `dbi`'s tree, for messages.
    private func treeName(_ dbi: DatabaseHandle) -> String { environment.handles.name(of: dbi) ?? "#\(dbi)" }

    private func writableTree(_ dbi: DatabaseHandle, _ operation: String) throws -> (WriteTransaction, String) {
        guard let writer, let name = environment.handles.name(of: dbi) else {
            throw StorageError(code: EACCES, operation: operation, detail: "not in a write transaction")
        }
        return (writer, name)
    }

    /// Writes `value` under `key`. With `noOverwrite`, an existing key is left alone and false
    /// returned.
    func put(_ dbi: DatabaseHandle, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
             noOverwrite: Bool = false) throws -> Bool
    {
        // Through the tree's access when this transaction read the tree already, or made many
        // puts: no search of the engine's trees by name (see ``writeAccess(_:)``).
        let mode: PutMode = noOverwrite ? .noOverwrite : .upsert
        guard let writer = unretainedWriter, let access = writeAccess(dbi) else {
            // By name: outside a write transaction, or a tree this snapshot does not have (the
            // engine's error names it).
            let (writer, name) = try writableTree(dbi, "writing a value")
            return try putting(name) { try writer.put(name, key: key, value: value, mode: mode) }
        }
        return try putting(treeName(dbi)) {
            _ = try Self.put(writer, access) { try $0.put($1, key: key, value: value, mode: mode) }
        }
    }

    /// Runs one put: true when it wrote, false when `.noOverwrite` found the key, the engine's
    /// other errors wrapped naming the tree.
    @inline(__always)
    private func putting(_ name: @autoclosure () -> String, _ put: () throws -> Void) throws -> Bool {
        do {
            try put()
            return true
        } catch let error as TrellisStorage.StorageError where error.code == .keyExists {
            return false
        } catch {
            throw StorageError.wrapping(error, operation: "writing a value to '\(name())'")
        }
    }

    /// Writes `value` under an integer key. With `append`, the key is expected to be larger than
    /// every key in the database (a new object's key): the engine then fills pages completely; a
    /// key that is not larger falls back to a normal put.
    func put(_ dbi: DatabaseHandle, integerKey: UInt64, value: UnsafeRawBufferPointer, append: Bool = false) throws {
        guard append else {
            var keyValue = integerKey.littleEndian
            _ = try withUnsafeBytes(of: &keyValue) { try put(dbi, key: $0, value: value) }
            return
        }
        guard let writer = unretainedWriter, let access = writeAccess(dbi) else {
            let (writer, name) = try writableTree(dbi, "writing a value")
            try appending(integerKey, value, name) { try writer.put(name, key: $0, value: $1, mode: $2) }
            return
        }
        try appending(integerKey, value, treeName(dbi)) { key, value, mode in
            try Self.put(writer, access) { try $0.put($1, key: key, value: value, mode: mode) }
        }
    }

    /// Calls `body` with the write transaction and a tree access this transaction holds (in
    /// `writer` and `accesses`, which a put leaves alone), neither retained for the call.
    @inline(__always)
    private static func put<R>(_ writer: Unmanaged<WriteTransaction>, _ access: Unmanaged<TreeAccess>,
                               _ body: (WriteTransaction, TreeAccess) throws -> R) rethrows -> R
    {
        try writer._withUnsafeGuaranteedRef { writer in
            try access._withUnsafeGuaranteedRef { access in try body(writer, access) }
        }
    }

    /// An append of `value` under `integerKey` through `put`, as a normal put when the key is not
    /// past the last one.
    @inline(__always)
    private func appending(_ integerKey: UInt64, _ value: UnsafeRawBufferPointer, _ name: @autoclosure () -> String,
                           _ put: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, PutMode) throws -> Bool) throws
    {
        var keyValue = integerKey.littleEndian
        do {
            try withUnsafeBytes(of: &keyValue) { key in
                do {
                    _ = try put(key, value, .append)
                    return
                } catch let error as TrellisStorage.StorageError where error.code == .keyExists {}
                _ = try put(key, value, .upsert)
            }
        } catch {
            throw StorageError.wrapping(error, operation: "writing a value to '\(name())'")
        }
    }

    /// Deletes `key`; returns false if it was absent.
    @discardableResult
    func delete(_ dbi: DatabaseHandle, key: UnsafeRawBufferPointer) throws -> Bool {
        let (writer, name) = try writableTree(dbi, "deleting a value")
        guard access(dbi) != nil else { return false }
        do {
            return try writer.delete(name, key: Array(key))
        } catch {
            throw StorageError.wrapping(error, operation: "deleting a value from '\(name)'")
        }
    }

    @discardableResult
    func delete(_ dbi: DatabaseHandle, integerKey: UInt64) throws -> Bool {
        var key = integerKey.littleEndian
        return try withUnsafeBytes(of: &key) { try delete(dbi, key: $0) }
    }
}
#endif
