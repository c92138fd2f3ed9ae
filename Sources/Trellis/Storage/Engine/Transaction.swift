// The TrellisStorage build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=trellis, see Package.swift).
#if !TRELLIS_LMDB
import Foundation
import Synchronization
import TrellisStorage

/// A TrellisStorage transaction: a read snapshot, or the single write transaction of the file.
///
/// Values returned by ``get(_:key:)`` are lent in place: in a read snapshot they are the file's
/// bytes in the memory map, valid until the transaction ends; in a write transaction they may be
/// its own copy of a page, valid until the next change. Callers decode them at once and never
/// keep the pointer (the LMDB build's rule too).
final class Transaction {
    // A transaction is used by one thread at a time (a shared snapshot's threads only read these
    // fields): dynamic exclusivity checks on them are skipped, as they cost more than the reads.
    let environment: Environment
    let isReadOnly: Bool
    @exclusivity(unchecked) private var reader: ReadTransaction?
    @exclusivity(unchecked) private(set) var writer: WriteTransaction?
    /// `writer`, not retained (set and cleared with it): a put calls the engine through it
    /// without the retain and release that a load of `writer` costs.
    @exclusivity(unchecked) private(set) var unretainedWriter: Unmanaged<WriteTransaction>?
    @exclusivity(unchecked) private var isEnded = false
    /// What ``version`` answers, set whenever `reader`, `writer` or `suspendedVersion` is (nil
    /// when none is): a commit asks for it about ten times, and each asked the engine through a
    /// retained `writer` (~700 instructions a small commit, issue 37).
    @exclusivity(unchecked) private var knownVersion: Int?
    /// The engine's view of each tree this transaction used, by handle (nil: not looked up yet).
    @exclusivity(unchecked) private var accesses: [TreeAccess?] = []
    /// Handles whose tree this snapshot does not have.
    @exclusivity(unchecked) private var absent: Set<DatabaseHandle> = []
    /// Trees this write transaction created (published to the process when it commits).
    @exclusivity(unchecked) private var createdHandles: Set<DatabaseHandle> = []
    /// The first change refused for want of space. Kept for the LMDB build's contract: the
    /// engine writes pages only at commit, where a full disk is thrown, so this stays nil.
    private(set) var resourceFailure: StorageError?
    /// The first damaged page a read met (the read returned nothing, as with LMDB).
    private(set) var readFailure: StorageError?
    /// Set when the snapshot is read from several threads at once (a frozen Realm): then trees
    /// not looked up before are looked up under `sharedLock` and not cached.
    private(set) var isShared = false
    /// Made by ``shareBetweenThreads()`` (most transactions are never shared).
    private var sharedLock: NSLock?
    /// Trees looked up under `sharedLock` once the snapshot is shared.
    private var sharedAccesses: [DatabaseHandle: TreeAccess] = [:]
    /// Whether this write transaction holds the environment's write gate.
    @exclusivity(unchecked) private var holdsGate = false
    /// Leaf pages a read snapshot kept for the lookups that follow (``get(_:nearIntegerKey:)``,
    /// ``get(_:nearKey:)``): one per database for the two integer-keyed ones used last (an
    /// owner's class and its links'), and one byte-keyed (a collection's chunks). A read
    /// snapshot's pages never change, so they stay valid until it ends.
    @exclusivity(unchecked) var keptLeaves: (KeptLeaf<KeptIntegerLeaf>?, KeptLeaf<KeptIntegerLeaf>?) = (nil, nil)
    @exclusivity(unchecked) var keptBytesLeaf: KeptLeaf<KeptBytesLeaf>?

    /// Begins a read snapshot, or the write transaction (waiting for any other writer).
    /// `holdingGate`: the caller already took the write gate for this write transaction, which
    /// then owns it (releases it when it ends, or here if it cannot begin).
    init(environment: Environment, readOnly: Bool, holdingGate: Bool = false) throws {
        self.environment = environment
        self.isReadOnly = readOnly
        if readOnly {
            do {
                let reader = try environment.store.beginRead()
                self.reader = reader
                knownVersion = Int(reader.txnID)
            } catch {
                throw StorageError.wrapping(error, operation: "beginning a read transaction")
            }
        } else {
            if !holdingGate { environment.handles.gate.acquire() }
            holdsGate = true
            do {
                let writer = try environment.store.beginWrite()
                self.writer = writer
                unretainedWriter = Unmanaged.passUnretained(writer)
                knownVersion = Int(writer.txnID)
            } catch {
                releaseGate()
                throw StorageError.wrapping(error, operation: "beginning a write transaction")
            }
            // The last write transaction's array, emptied: under the gate, which this one holds.
            swap(&accesses, &environment.spareWriteAccesses)
        }
    }

    /// A read snapshot on the commit `reader` reads (see ``duplicate()``).
    private init(environment: Environment, reader: ReadTransaction) {
        self.environment = environment
        self.isReadOnly = true
        self.reader = reader
        knownVersion = Int(reader.txnID)
    }

    /// A second read snapshot of the commit this read snapshot reads, which keeps it readable
    /// after this one ends or moves on (a ``ThreadSafeReference`` resolves as of its version);
    /// nil for a write transaction, or a snapshot that ended or let go of its version.
    func duplicate() -> Transaction? {
        guard isReadOnly, !isEnded, suspendedVersion == nil, let reader,
              let copy = try? environment.store.beginRead(sameCommitAs: reader)
        else { return nil }
        return Transaction(environment: environment, reader: copy)
    }

    deinit { abort() }

    private func releaseGate() {
        if holdsGate {
            holdsGate = false
            // Handed to the next write transaction while the gate is still held, emptied.
            forgetTrees()
            swap(&accesses, &environment.spareWriteAccesses)
            environment.handles.gate.release()
        }
    }

    var isActive: Bool { !isEnded }

    private var reading: TreeReading? { reader ?? writer }

    // MARK: - Ending

    func commit() throws {
        guard let writer, !isEnded else {
            abort()
            return
        }
        isEnded = true
        forgetTrees()
        defer { releaseGate() }
        do {
            try writer.commit()
        } catch {
            throw StorageError.wrapping(error, operation: "committing the write transaction")
        }
        for handle in createdHandles { environment.handles.noteExists(handle) }
        unretainedWriter = nil
        self.writer = nil
        knownVersion = nil
    }

    /// Commits, or throws the resource failure that made the transaction unusable.
    func commitUnlessFailed() throws {
        if let resourceFailure { throw resourceFailure }
        try commit()
    }

    func abort() {
        if isEnded { return }
        isEnded = true
        forgetTrees()
        writer?.abort()
        unretainedWriter = nil
        writer = nil
        reader?.end()
        reader = nil
        suspendedVersion = nil
        knownVersion = nil
        releaseGate()
    }

    private func forgetTrees() {
        keptLeaves = (nil, nil)
        keptBytesLeaf = nil
        // Emptied in place, keeping its length: growing it again for the next transaction's
        // first lookups (a write's every tree) cost more than the rest of a lookup's bookkeeping.
        for index in accesses.indices where accesses[index] != nil { accesses[index] = nil }
        if !absent.isEmpty { absent.removeAll(keepingCapacity: true) }
    }

    /// The version a suspended snapshot read before it let go (see ``suspend()``).
    @exclusivity(unchecked) private var suspendedVersion: Int?

    /// Whether the snapshot let go of its version (``suspend()``) and must be renewed first.
    var isSuspended: Bool { suspendedVersion != nil }

    /// Lets go of the snapshot's version, so that it pins nothing while its thread waits for the
    /// write lock and writes; ``renew()`` takes the newest version again.
    func suspend() {
        precondition(isReadOnly, "Trellis internal error: only read transactions can be suspended.")
        guard let reader, suspendedVersion == nil, !isEnded else { return }
        forgetTrees()
        suspendedVersion = Int(reader.txnID)
        knownVersion = suspendedVersion
        reader.end()
        self.reader = nil
    }

    /// Moves a read transaction to the newest committed version.
    func renew() throws {
        precondition(isReadOnly, "Trellis internal error: only read transactions can be renewed.")
        precondition(!isEnded, "Trellis internal error: transaction used after it ended.")
        forgetTrees()
        reader?.end()
        reader = nil
        suspendedVersion = nil
        knownVersion = nil
        do {
            let reader = try environment.store.beginRead()
            self.reader = reader
            knownVersion = Int(reader.txnID)
        } catch {
            isEnded = true
            throw StorageError.wrapping(error, operation: "refreshing the read transaction")
        }
    }

    /// The version (commit number) this transaction reads; a write transaction's is the one its
    /// commit will have (one past the last commit, as with LMDB's transaction ids).
    /// (A transaction's commit number never changes while it reads it: set with the snapshot,
    /// ``knownVersion``.)
    var version: Int {
        guard let knownVersion else { preconditionFailure("Trellis internal error: transaction used after it ended.") }
        return knownVersion
    }

    // MARK: - Trees

    /// The engine's view of the tree of `dbi`, or nil when this snapshot does not have it.
    @inline(__always)
    func access(_ dbi: DatabaseHandle) -> TreeAccess? {
        let index = Int(dbi)
        if !isShared, index < accesses.count, let access = accesses[index] { return access }
        return lookUp(dbi)
    }

    /// Puts this write transaction made by name (``writeAccess(_:)``).
    @exclusivity(unchecked) private var namedPuts = 0
    /// The puts by name a write transaction makes before it looks up the trees it writes.
    private static let namedPutLimit = 16

    /// The access to put through into `dbi`'s tree, nil to put by name. A first lookup costs about
    /// two puts by name, so a small write transaction (a handful of puts) writes a tree it did not
    /// read by name; one that made more than ``namedPutLimit`` puts (a bulk insert) looks each
    /// tree it writes up once and puts through its access from then on.
    ///
    /// Not retained: `accesses` holds it until the transaction ends or forgets its trees, which
    /// no put does (a put through it costs no retain and release).
    @inline(__always)
    func writeAccess(_ dbi: DatabaseHandle) -> Unmanaged<TreeAccess>? {
        if let access = unretainedLookedUp(dbi) { return access }
        namedPuts &+= 1
        guard namedPuts > Self.namedPutLimit, !isShared, let access = lookUp(dbi) else { return nil }
        return Unmanaged.passUnretained(access)  // kept in `accesses` by `lookUp`
    }

    /// The access of `dbi`'s tree if this (unshared) transaction looked it up already, else nil;
    /// read from `accesses` without retaining it (an element of an array of optional references
    /// is one pointer, null for nil).
    @inline(__always)
    func unretainedLookedUp(_ dbi: DatabaseHandle) -> Unmanaged<TreeAccess>? {
        let index = Int(dbi)
        guard !isShared, index < accesses.count else { return nil }
        return accesses.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            return UnsafeRawPointer(base + index).load(as: UnsafeRawPointer?.self).map {
                Unmanaged<TreeAccess>.fromOpaque($0)
            }
        }
    }

    private func lookUp(_ dbi: DatabaseHandle) -> TreeAccess? {
        if isShared {
            if Int(dbi) < accesses.count, let access = accesses[Int(dbi)] { return access }
            guard let sharedLock else { return nil }
            return sharedLock.withLock {
                if let access = sharedAccesses[dbi] { return access }
                guard let access = resolve(dbi) else { return nil }
                sharedAccesses[dbi] = access
                return access
            }
        }
        if absent.contains(dbi) { return nil }
        guard let access = resolve(dbi) else {
            absent.insert(dbi)
            return nil
        }
        if Int(dbi) >= accesses.count {
            accesses.append(contentsOf: repeatElement(nil, count: Int(dbi) + 1 - accesses.count))
        }
        accesses[Int(dbi)] = access
        return access
    }

    private func resolve(_ dbi: DatabaseHandle) -> TreeAccess? {
        guard !isEnded, let reading, let name = environment.handles.name(of: dbi) else { return nil }
        do {
            let access = try reading.access(name)
            environment.handles.noteExists(dbi)
            return access
        } catch let error as TrellisStorage.StorageError {
            if case .treeNotFound = error.code { return nil }
            noteReadFailure(error, "looking up '\(name)'")
            return nil
        } catch {
            return nil
        }
    }

    func noteReadFailure(_ error: any Error, _ operation: String) {
        if readFailure == nil { readFailure = StorageError.wrapping(error, operation: operation) }
    }

    /// The handle of a named database, creating the tree in a write transaction when `create`
    /// is set. Returns nil when it does not exist and may not be created. A database some
    /// other transaction of this process saw exists (it may be newer than this snapshot, in
    /// which case it reads as empty here), as in the LMDB build.
    func database(named name: String, create: Bool, integerKeys: Bool = false, sortedDuplicates: Bool = false)
        throws -> DatabaseHandle?
    {
        precondition(!sortedDuplicates, "Trellis internal error: TrellisStorage has no sorted duplicates (docs/STORAGE.md).")
        let dbi = environment.handles.register(name)
        if access(dbi) != nil { return dbi }
        guard create, let writer else { return environment.handles.isKnownToExist(dbi) ? dbi : nil }
        do {
            try writer.createTree(name, order: integerKeys ? .integer : .bytes)
        } catch {
            throw StorageError.wrapping(error, operation: "creating the database '\(name)'")
        }
        absent.remove(dbi)
        createdHandles.insert(dbi)
        return dbi
    }

    /// The names of every named database in this snapshot.
    func databaseNames() throws -> [String] {
        do {
            if let writer { return try writer.treeNames() }
            if let reader { return try reader.treeNames() }
        } catch {
            throw StorageError.wrapping(error, operation: "listing the databases")
        }
        return []
    }

    /// The entry count the engine records for `name` in this snapshot.
    func recordedEntryCount(ofDatabaseNamed name: String) -> Int? {
        guard let reading, let info = try? (reader?.info(name) ?? writer?.info(name)) else { return nil }
        _ = reading
        return Int(info.count)
    }

    /// Whether any of `databases` was created by this transaction (and is not committed yet).
    func hasOpened(anyOf databases: [DatabaseHandle]) -> Bool {
        !createdHandles.isEmpty && databases.contains { createdHandles.contains($0) }
    }

    /// Number of trees in the file (used to tell an empty file from a foreign one).
    func mainDatabaseEntryCount() -> Int { (try? databaseNames().count) ?? 0 }

    /// Prepares a read transaction to be read from several threads at once (a frozen Realm):
    /// every tree already known is looked up now; later ones under a lock.
    func shareBetweenThreads() {
        precondition(isReadOnly, "Trellis internal error: only read transactions can be shared.")
        for dbi in environment.handles.all { _ = access(dbi) }
        sharedLock = NSLock()
        isShared = true
    }

    /// Removes every entry of a database, keeping the database.
    func empty(_ dbi: DatabaseHandle) throws {
        guard let writer, access(dbi) != nil, let name = environment.handles.name(of: dbi) else { return }
        do {
            try writer.clearTree(name)
        } catch {
            throw StorageError.wrapping(error, operation: "emptying '\(name)'")
        }
    }

    /// Deletes a database and its entries (tests: a file of an older format lacks one).
    func drop(_ dbi: DatabaseHandle) throws {
        guard let writer, let name = environment.handles.name(of: dbi) else { return }
        do {
            try writer.dropTree(name)
        } catch {
            throw StorageError.wrapping(error, operation: "dropping '\(name)'")
        }
        forgetTrees()
    }

    /// Number of entries (for a table: objects) in a database, in O(1).
    func entryCount(_ dbi: DatabaseHandle) -> Int {
        guard let access = access(dbi) else { return 0 }
        return Int(access.entryCount)
    }

    // MARK: - Cursors

    /// A cursor over `dbi`. Throws for a database this snapshot does not have.
    func cursor(_ dbi: DatabaseHandle) throws -> Cursor {
        guard let cursor = existingCursor(dbi) else {
            throw StorageError(kind: .notFound, operation: "opening a cursor",
                               detail: "no database '\(environment.handles.name(of: dbi) ?? "#\(dbi)")' in this snapshot")
        }
        return cursor
    }

    /// Calls `body` with a cursor over `dbi` (nil when this snapshot does not have the database).
    /// `body` must not keep the cursor.
    func withReusableCursor<R>(_ dbi: DatabaseHandle, _ body: (Cursor?) throws -> R) rethrows -> R {
        try body(existingCursor(dbi))
    }

    /// A cursor over `dbi`, or nil when this snapshot does not have the database (it was
    /// created later, so it is empty here).
    func existingCursor(_ dbi: DatabaseHandle) -> Cursor? {
        guard let access = access(dbi) else { return nil }
        return Cursor(transaction: self, access: access, database: dbi)
    }

    /// Every tree of this snapshot with its key order and a way to walk it (copies, checks).
    func treesForCopy() throws -> [(name: String, order: KeyOrder, cursor: Cursor)] {
        try databaseNames().compactMap { name in
            let dbi = environment.handles.register(name)
            guard let access = access(dbi) else { return nil }
            return (name, access.keyOrder, Cursor(transaction: self, access: access, database: dbi))
        }
    }
}
#endif
