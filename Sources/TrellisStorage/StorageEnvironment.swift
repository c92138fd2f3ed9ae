import Dispatch
import Synchronization

/// A TrellisStorage file opened for use: the entry point of the engine.
///
/// Any number of read transactions (snapshots that never block) and one write transaction at a
/// time across threads and processes. See docs/STORAGE.md for the format and the protocols.
public final class StorageEnvironment: @unchecked Sendable {
    /// How an environment behaves.
    public struct Options: Sendable {
        /// Sync the file at each commit (one `fdatasync` / `F_FULLFSYNC`). When false (Realm's
        /// relaxed mode), commits stay atomic and consistent but a power cut may lose the last
        /// ones; `sync()` makes them durable.
        public var syncOnCommit = true
        /// Reader slots of the lock file (live read transactions across all processes).
        public var readerSlots = 126
        /// The 64-byte key of an encrypted file (Realm's `encryptionKey`; docs/STORAGE.md,
        /// section 12): a new file is created encrypted with it, an existing one must have been
        /// written with it. Nil: the file is plain (an encrypted file then refuses to open).
        public var encryptionKey: [UInt8]?
        /// The most decrypted pages an encrypted file's environment keeps (4 KiB each); pages
        /// lent to live transactions come on top until those end (section 12).
        public var decryptedPageCacheSize = 2048
        /// Opens the file with `O_RDONLY` and never writes it: no recovery writes, no seal at
        /// close, no write transactions. Works on a read-only file or folder (the reader table
        /// is then private to this process when the lock file cannot be written, as LMDB does on
        /// a read-only file system). Opening a missing or empty file fails.
        public var readOnly = false
        /// The largest size the file may grow to (nil: no limit). A commit that needs more fails
        /// with an `io` error of `EFBIG` and leaves the file at its last commit.
        public var maximumFileSize: UInt64?

        /// The defaults: durable commits, 126 reader slots, writable, no size limit.
        public init() {}
    }

    let pager: Pager
    let readers: ReaderTable
    /// Tree descriptors of the current catalog, for read transactions.
    let descriptors = DescriptorCache()
    private let writerGate = DispatchSemaphore(value: 1)
    /// Whether each commit syncs. Change it only while no write transaction is open.
    public var syncOnCommit: Bool
    /// Pages this process's relaxed commits recorded in the free tree's `durable` section after
    /// the durable commit `since` (the writer's; a relaxed commit syncs when they are many).
    private var awaitingSync: (since: UInt64, count: Int) = (0, 0)
    /// Pages this process's relaxed commits wrote after the durable commit `since` (used and
    /// changed by the writer only): freed again, they need not wait for a sync to be reused, so
    /// relaxed commits keep a small file small.
    private var writtenSinceDurable: (since: UInt64, pages: PageSet) = (0, PageSet())
    /// The snapshot read transactions began on last (or this process's writer published last),
    /// and the meta slot it was decoded from.
    let latest = Mutex<LatestSnapshot?>(nil)
    /// The meta slots as this process's writer last saw them (plain files; the writer's only).
    var writerSlots = WriterSlotCache()
    /// The trees this process's last commit wrote, for its next write transaction (the writer's only).
    var carriedTrees: CarriedTrees?
    /// What this process's last write transaction left for the next one (the writer's only).
    var writerSpares = WriterSpares()
    private var isClosed = false
    /// Whether commits list the pages they free in their meta slot (versions 9 and 10,
    /// docs/STORAGE.md 2.10); files of older versions keep recording them in the free tree.
    private(set) var listsFreedPagesInSlot = false
    /// Whether the file was opened read-only (``Options/readOnly``).
    public let isReadOnly: Bool
    /// The largest size the file may grow to (``Options/maximumFileSize``).
    let maximumFileSize: UInt64?

    /// The file.
    public var file: StorageFile { pager.file }

    /// Bytes a page occupies in the file: `StorageLimits.pageSize`, or
    /// `StorageLimits.encryptedPageSize` for an encrypted file.
    public var filePageSize: Int { pager.stride }

    /// Whether the file is encrypted (docs/STORAGE.md, section 12).
    public var isEncrypted: Bool { pager.cipher != nil }

    /// Opens (creating if needed) the file at `path`, with its lock file at `path + "-lock"`.
    public convenience init(path: String, options: Options = Options()) throws {
        if !options.readOnly { try Self.createIfMissing(path: path, options: options) }
        let file = try PosixFile(path: path, create: !options.readOnly, readOnly: options.readOnly)
        let readers: ReaderTable
        do {
            readers = try Self.readerTable(lockFile: path + "-lock", options: options)
        } catch {
            file.close()
            throw error
        }
        try self.init(file: file, readers: readers, options: options)
    }

    /// The reader table in the lock file; for a read-only open where the lock file cannot be
    /// written (a read-only file system, or a folder where it does not exist and cannot be
    /// made: then no process has the file open for writing), one private to this process.
    private static func readerTable(lockFile: String, options: Options) throws -> ReaderTable {
        do {
            return try ReaderTable(lockFile: lockFile, slots: options.readerSlots)
        } catch let error as StorageError where options.readOnly && Platform.isUnwritable(error) {
            guard Platform.isReadOnlyFileSystem(error) || !Platform.exists(path: lockFile) else { throw error }
            return ReaderTable(inMemory: options.readerSlots)
        }
    }

    /// Opens an environment on any `StorageFile` (a file in memory, a file that records or fails
    /// its calls), with a reader table private to this process.
    public convenience init(file: StorageFile, options: Options = Options()) throws {
        try self.init(file: file, readers: ReaderTable(inMemory: options.readerSlots), options: options)
    }

    init(file: StorageFile, readers: ReaderTable, options: Options) throws {
        pager = Pager(file: file)
        self.readers = readers
        syncOnCommit = options.syncOnCommit
        isReadOnly = options.readOnly
        maximumFileSize = options.maximumFileSize
        do {
            try open(options: options)
        } catch {
            readers.close()
            file.close()
            throw error
        }
    }

    deinit { close() }

    /// Closes the file, sealing its last commit (see `seal()`). Transactions must have ended.
    public func close() {
        if isClosed { return }
        isClosed = true
        if !isReadOnly { try? seal(waiting: false) }
        readers.close()
        file.close()
    }

    /// Syncs the file and records in the spare meta slot that the current commit is durable, so
    /// that the next open trusts it entirely: a damaged page of it is then reported as
    /// `corruptFile` instead of being taken for a commit torn by a power cut (which recovery
    /// would roll back). Two syncs; done at `close()`, which never waits for a writer: while
    /// one holds the lock, the file is left for it (or the next close) to seal.
    public func seal() throws {
        try seal(waiting: true)
    }

    private func seal(waiting: Bool) throws {
        if waiting {
            writerGate.wait()
        } else if writerGate.wait(timeout: .now()) == .timedOut {
            return
        }
        defer { writerGate.signal() }
        if waiting {
            try file.lockWriter()
        } else if try !file.tryLockWriter() {
            return
        }
        defer { file.unlockWriter() }
        let current = try slots()
        guard let newest = current.first, newest.meta.durableTxnID < newest.meta.txnID else { return }
        try syncFile()
        let sealed = newest.meta.with(durableTxnID: newest.meta.txnID)
        var page = [UInt8](repeating: 0, count: Layout.pageSize)
        page.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            sealed.encode(into: base)
        }
        try readers.withLock {
            readers.durableTxnID = max(readers.durableTxnID, sealed.txnID)
            let target = Layout.metaPages[1 - newest.slot]
            try page.withUnsafeBytes { try pager.writePages($0, at: target) }
        }
        try syncFile()
    }

    // MARK: - Opening and recovery

    private func open(options: Options) throws {
        let size = try file.size()
        if size >= Self.headerBytes {
            try validateHeader(size: size, options: options)
            // An encrypted file's header and slots are longer (section 12).
            if size >= pager.offset(ofPage: Layout.firstDataPage) {
                // Readers never wait for a writer: when the newest commit checks out, the file is
                // opened at it without the writer lock (another process may be writing).
                if try openAtNewestCommit() { return }
                if isReadOnly {
                    // Nothing is written: open at the newest commit that checks out, torn one left.
                    try recover(erasingTornSlot: false)
                    return
                }
            }
        }
        // Empty, or shorter than its header and meta slots: another thread or process may be
        // making it in place, holding the writer lock while it writes them (FileCreation.swift).
        // Judged under that lock: made by then, ours to make when still empty, or cut short.
        writerGate.wait()
        defer { writerGate.signal() }
        try file.lockWriter()
        defer { file.unlockWriter() }
        if try file.size() == 0 {
            if isReadOnly {
                throw StorageError(.incompatibleFile, "TrellisStorage: '\(file.name)' is empty; a read-only open needs "
                    + "an existing TrellisStorage file.")
            }
            try Self.writeNewFile(pager, key: options.encryptionKey, cachedPages: options.decryptedPageCacheSize)
        }
        try validateHeader(size: try file.size(), options: options)
        if isReadOnly {
            try recover(erasingTornSlot: false)
            return
        }
        // Whatever a killed process left in the OS cache becomes durable: recovery may then
        // trust every page written by a commit up to the current one's durable mark.
        try syncFile()
        try recover(erasingTornSlot: true)
    }

    private func validateHeader(size: UInt64, options: Options) throws {
        if size < UInt64(Layout.firstDataPage) * UInt64(Layout.pageSize) {
            throw StorageError(.incompatibleFile, "TrellisStorage: '\(file.name)' is \(size) bytes, shorter than a "
                + "TrellisStorage file's header; it is not one (or it was cut short).")
        }
        var header = [UInt8](repeating: 0, count: Layout.pageSize)
        try header.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        let cipher: PageCipher? = try header.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return nil }
            let (encrypted, version) = try FileHeader.validate(base)
            listsFreedPagesInSlot = FileHeader.listsFreedPagesInSlot(version: version)
            switch (encrypted, options.encryptionKey) {
            case (false, nil): return nil
            case (true, let key?): return try PageCipher.opening(header: base, key: key, path: file.name)
            case (true, nil):
                throw StorageError(.encryptionKeyRequired, "TrellisStorage: '\(file.name)' is encrypted; open it with "
                    + "its encryption key.")
            case (false, _?):
                throw StorageError(.fileNotEncrypted, "TrellisStorage: '\(file.name)' is not encrypted, but an "
                    + "encryption key was given. Open it without a key (or write an encrypted copy of it).")
            }
        }
        if let cipher, pager.cipher == nil { pager.encrypt(with: cipher, cachedPages: options.decryptedPageCacheSize) }
    }

    /// Opens at the newest commit without the writer lock if it passes its checks; false when
    /// it does not (a commit torn by a power cut, or pages a live writer reused while they were
    /// checked): the caller recovers under the writer lock, which may erase the torn slot.
    private func openAtNewestCommit() throws -> Bool {
        // The table lock excludes meta-slot writes: the slot is read whole.
        guard let newest = try readers.withLock({ try slots().first }) else { return false }
        do {
            try checkCommit(newest.meta)
        } catch let error as StorageError {
            guard case .corruptFile = error.code else { throw error }
            pager.forgetVerifications()
            return false
        }
        // Written before its slot was, so durable after this sync (unless the file is read-only:
        // then no commit is marked durable by this process).
        if !isReadOnly { try syncFile() }
        try readers.withLock {
            if !isReadOnly { readers.durableTxnID = max(readers.durableTxnID, newest.meta.txnID) }
            // A live writer may have published a newer commit since; keep it. A number no slot
            // holds (left by a process that died before a power cut) is replaced.
            let current = readers.currentTxnID
            let currentIsInASlot = try decodedSlot(holding: current) != nil
            if current < newest.meta.txnID || !currentIsInASlot {
                readers.publishCurrent(newest.meta.txnID)
            }
        }
        return true
    }

    /// The checks recovery makes of a commit: its pages (the free tree's too) up to its durable
    /// mark. The free tree's records are checked when a writer reads them.
    private func checkCommit(_ meta: MetaSlot) throws {
        let snapshot = try Snapshot(meta: meta, pager: pager)
        try pager.withUse {
            var verifier = Verifier(snapshot: snapshot, bound: meta.durableTxnID, full: false)
            _ = try verifier.run()
        }
    }

    /// The well-formed meta slots, newest first.
    func slots() throws -> [(slot: Int, meta: MetaSlot)] {
        let base = try pager.map(covering: Layout.firstDataPage)
        var found: [(slot: Int, meta: MetaSlot)] = []
        for (slot, page) in Layout.metaPages.enumerated() {
            if pager.cipher == nil {
                if let meta = MetaSlot.decode(base + Int(page) * Layout.pageSize) { found.append((slot, meta)) }
            } else if let meta = pager.metaPage(page, base: base).flatMap(Self.decodeMeta) {
                found.append((slot, meta))
            }
        }
        return Self.newestFirst(found)
    }

    /// Chooses the commit to open at: the newest slot whose pages pass their checksums; a torn
    /// newer slot is erased (docs/STORAGE.md, section 5).
    private func recover(erasingTornSlot: Bool) throws {
        let candidates = try slots()
        guard !candidates.isEmpty else {
            throw StorageError.corrupt(page: 1, "neither meta slot is readable")
        }
        var firstError: Error?
        for (position, candidate) in candidates.enumerated() {
            do {
                try checkCommit(candidate.meta)
                if !erasingTornSlot {
                    try readers.withLock {
                        // Past a torn newer slot (left in place), readers begin on this one.
                        if position > 0 || readers.currentTxnID < candidate.meta.txnID {
                            readers.publishCurrent(candidate.meta.txnID)
                        }
                    }
                    return
                }
                if position > 0 {
                    // The newer slot's commit was torn: erase the slot so no one uses it.
                    try pager.zeroPage(Layout.metaPages[candidates[0].slot])
                    try syncFile()
                    pager.forgetVerifications()
                }
                try readers.withLock {
                    readers.durableTxnID = candidate.meta.txnID
                    readers.publishCurrent(candidate.meta.txnID)
                }
                return
            } catch let error as StorageError {
                guard case .corruptFile = error.code else { throw error }
                if firstError == nil { firstError = error }
            }
        }
        throw firstError ?? StorageError.corrupt(page: 1, "no commit could be opened")
    }

    /// The current commit.
    func currentMeta() throws -> MetaSlot {
        guard let newest = try slots().first else {
            throw StorageError.corrupt(page: 1, "neither meta slot is readable")
        }
        return newest.meta
    }

    // MARK: - Transactions

    /// Starts a read transaction on the current commit. End it (or let it go) promptly: its
    /// pages stay reserved while it lives.
    ///
    /// Cost: an idle reader slot of this process (claimed from the lock file once, then kept),
    /// the current commit published in it with an atomic store and a fence (no lock, no system
    /// call), and the snapshot of that commit, shared with the transactions before it.
    public func beginRead() throws -> ReadTransaction {
        let slot = try readers.takeSlot()
        do {
            return ReadTransaction(readers: readers, descriptors: descriptors, snapshot: try pinnedSnapshot(slot), slot: slot,
                                   epoch: pager.beginUse())
        } catch {
            readers.release(slot)
            throw error
        }
    }

    /// Publishes in `slot` the commit that is current and returns its snapshot.
    private func pinnedSnapshot(_ slot: Int) throws -> Snapshot {
        // The lock-free way (ReaderTable): a few rounds, in case writers overwrite the meta slot
        // of the commit this reader found current before it is read.
        for _ in 0..<64 {
            let txnID = readers.pinCurrent(slot)
            if txnID == 0 { break }
            if let latest = latest.withLock({ $0 }), latest.isCurrent(txnID) { return latest.snapshot }
            if let found = try decodedSlot(holding: txnID) {
                let snapshot = try Snapshot(meta: found.meta, pager: pager)
                latest.withLock { $0 = LatestSnapshot(slot: found.slot, snapshot: snapshot, fingerprint: found.fingerprint) }
                return snapshot
            }
        }
        // The table lock excludes writers' meta-slot writes and scans: the newest readable slot,
        // preferring the published current commit (section 6).
        return try readers.withLock {
            let current = readers.currentTxnID
            let meta = try (current == 0 ? nil : decodedSlot(holding: current)?.meta) ?? currentMeta()
            readers.pin(slot, to: meta.txnID)
            return try Snapshot(meta: meta, pager: pager)
        }
    }

    /// The meta slot holding commit `txnID`, if one does and passes its checksum.
    private func decodedSlot(holding txnID: UInt64) throws -> (slot: Int, meta: MetaSlot, fingerprint: [UInt64])? {
        let base = try pager.map(covering: Layout.firstDataPage)
        var chosen: (slot: Int, meta: MetaSlot, fingerprint: [UInt64])?
        for (slot, page) in Layout.metaPages.enumerated() {
            var found: (slot: Int, meta: MetaSlot, fingerprint: [UInt64])?
            if pager.cipher != nil {
                guard let decrypted = pager.metaPage(page, base: base), let meta = Self.decodeMeta(decrypted),
                      meta.txnID == txnID
                else { continue }
                found = (slot, meta, decrypted.fingerprint)
            } else {
                let start = base + Int(page) * Layout.pageSize
                guard start.loadLE(UInt64.self, at: 8) == txnID, let decoded = MetaSlot.decodeWithCheckedWords(start),
                      decoded.meta.txnID == txnID
                else { continue }
                found = (slot, decoded.meta, decoded.checkedWords)
            }
            // Of two copies of one commit, the sealed one, as `slots()` and so the writer choose.
            if let found, chosen.map({ found.meta.durableTxnID > $0.meta.durableTxnID }) ?? true { chosen = found }
        }
        return chosen
    }

    /// The slot in a decrypted meta page.
    private static func decodeMeta(_ page: (plaintext: [UInt8], fingerprint: [UInt64])) -> MetaSlot? {
        page.plaintext.withUnsafeBytes { bytes in bytes.baseAddress.flatMap { MetaSlot.decode($0) } }
    }

    /// Runs `body` in a read transaction.
    public func read<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        let transaction = try beginRead()
        defer { transaction.end() }
        return try body(transaction)
    }

    /// Starts the write transaction, waiting for any other writer (thread or process).
    public func beginWrite() throws -> WriteTransaction {
        if isReadOnly {
            throw StorageError.misuse("'\(file.name)' was opened read-only; it cannot begin a write transaction")
        }
        writerGate.wait()
        do {
            try file.lockWriter()
        } catch {
            writerGate.signal()
            throw error
        }
        let epoch = pager.beginUse()
        do {
            // The slots do not change until this transaction publishes: every writer of them
            // (a commit, a seal, recovery) holds the writer lock.
            let current = try slotsForWriter()
            guard let newest = current.first else {
                throw StorageError.corrupt(page: 1, "neither meta slot is readable")
            }
            // After this process's own commit, the snapshot it published for readers (no new
            // snapshot made and freed per write, ~1K instructions a small commit).
            let meta = newest.meta
            let snapshot = try publishedSnapshot(of: newest) ?? Snapshot(meta: meta, pager: pager)
            let (oldestReader, durable) = try readers.withLock {
                // A writer killed after marking its commit durable and before publishing it
                // (`publish`) left readers beginning on the commit before, whose pages that
                // commit freed. Publish it now, before the scan: a reader then either shows in
                // the scan or moves on to it (section 6). And never count past what readers can
                // begin on.
                let durable = readers.durableTxnID
                if durable == meta.txnID && readers.currentTxnID < durable { readers.publishCurrent(durable) }
                let current = readers.currentTxnID
                return (min(readers.oldestReader() ?? UInt64.max, current == 0 ? UInt64.max : current), durable)
            }
            return try WriteTransaction(environment: self, snapshot: snapshot, slots: current,
                                        oldestReader: oldestReader, durable: durable, epoch: epoch)
        } catch {
            endWrite(epoch: epoch)
            throw error
        }
    }

    /// Runs `body` in the write transaction and commits it; aborts it if `body` throws.
    public func write<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
        let transaction = try beginWrite()
        do {
            let result = try body(transaction)
            try transaction.commit()
            return result
        } catch {
            transaction.abort()
            throw error
        }
    }

    /// Records the pages a commit wrote (`runs`: first page and page count) after the durable
    /// commit `durable`; nil: the commit synced, so it is the durable one and nothing is after it.
    /// Called by the writer only. Another process's sync moves the durable commit, and the
    /// record is then dropped (``beginWrite()`` compares).
    func noteWritten(_ runs: some Sequence<(first: UInt64, count: Int)>, by durable: UInt64?) {
        guard let durable else {
            writtenSinceDurable = (0, PageSet())
            return
        }
        // Added to a local copy, the property's set let go of meanwhile so that the copy is
        // its only owner and grows in place: an access to the property per page (each checked
        // for exclusivity at run time) cost ~1.9K instructions a small commit.
        var pages = writtenSinceDurable.since == durable ? writtenSinceDurable.pages : PageSet()
        writtenSinceDurable = (durable, PageSet())
        for run in runs {
            for page in run.first..<run.first + UInt64(max(run.count, 1)) { pages.insert(page) }
        }
        writtenSinceDurable = (durable, pages)
    }

    /// The pages this process's commits wrote after the durable commit `durable` (none when
    /// the record is of another durable commit). The writer's commit asks, and lets go of the
    /// set before it records its own pages (`noteWritten`), so that they are added in place.
    func pagesWritten(after durable: UInt64) -> PageSet {
        writtenSinceDurable.since == durable ? writtenSinceDurable.pages : PageSet()
    }

    /// Pages recorded as waiting for a sync after the durable commit `durable` (see `awaitingSync`).
    func pagesAwaitingSync(after durable: UInt64) -> Int {
        awaitingSync.since == durable ? awaitingSync.count : 0
    }

    /// Records the count after a relaxed commit; nil: the commit synced.
    func notePagesAwaitingSync(_ state: (since: UInt64, count: Int)?) {
        awaitingSync = state ?? (0, 0)
    }

    func endWrite(epoch: UInt64) {
        pager.endUse(epoch)
        file.unlockWriter()
        writerGate.signal()
    }

    /// Publishes a commit whose pages are written: writes its meta slot, syncs when durable.
    /// `current`: the well-formed slots, newest first, as the write transaction found them (they
    /// have not changed since: it holds the writer lock).
    func publish(_ meta: MetaSlot, sync: Bool, slots current: [(slot: Int, meta: MetaSlot)]) throws {
        // `encode` writes every byte of the page: a pooled buffer (an array of a page, made and
        // freed, cost ~700 instructions a commit).
        let buffer = PageBufferPool.shared.take()
        defer { PageBufferPool.shared.give(buffer) }
        meta.encode(into: buffer)
        let page = UnsafeRawBufferPointer(start: buffer, count: Layout.pageSize)
        let target: Int = try readers.withLock {
            // Never overwrite the slot of the newest durable commit.
            let durable = readers.durableTxnID
            let keep = current.first { $0.meta.txnID == durable }?.slot
            let target = keep.map { 1 - $0 } ?? (current.last.map { current.count == 2 ? $0.slot : 1 - $0.slot } ?? 0)
            try pager.writePages(page, at: Layout.metaPages[target])
            return target
        }
        if sync {
            do {
                try syncFile()
            } catch {
                // The commit failed: take its slot back so that readers stay at the last commit
                // (the durable slot is untouched; the commit was never published to readers).
                _ = try? readers.withLock { try pager.zeroPage(Layout.metaPages[target]) }
                writerSlots.forget()
                throw error
            }
            try readers.withLock { readers.durableTxnID = meta.txnID }
        }
        published(meta, slot: target, page: page)
        // New read transactions begin on the commit from now on (after its sync when it syncs).
        readers.publishCurrent(meta.txnID)
    }

    /// Syncs the file. After a failed sync the OS may have dropped pages written since the last
    /// one from its cache (a later read gets what the disk holds): no page counts as verified in
    /// this process any more, so each is hashed again when next read (docs/STORAGE.md, section 2.4).
    private func syncFile() throws {
        do {
            try file.sync()
        } catch {
            pager.forgetPlainVerifications()
            throw error
        }
    }

    /// Makes every commit so far durable (after relaxed commits).
    public func sync() throws {
        writerGate.wait()
        defer { writerGate.signal() }
        try file.lockWriter()
        defer { file.unlockWriter() }
        let meta = try currentMeta()
        try syncFile()
        try readers.withLock { readers.durableTxnID = max(readers.durableTxnID, meta.txnID) }
    }

    /// Checks the current commit entirely: every checksum, key order, depths, counts, and that
    /// every page is used once or free. Throws `corruptFile` naming the first bad page.
    public func check() throws -> CheckReport {
        try read { transaction in
            var verifier = Verifier(snapshot: transaction.snapshot, bound: 0, full: true)
            return try verifier.run()
        }
    }
}

/// The snapshot read transactions began on last, with the meta slot it was decoded from.
final class LatestSnapshot: @unchecked Sendable {
    // @unchecked Sendable: immutable after init; Snapshot is immutable too.
    let slot: Int
    let snapshot: Snapshot
    /// The slot's checked bytes and checksum, as 64-bit words, from the copy it was decoded from
    /// (encrypted file: the nonce, tag and ciphertext of those bytes, as found in the file).
    private let encoded: [UInt64]
    /// Where the slot's page starts in the map.
    private let offset: Int

    init(slot: Int, snapshot: Snapshot, fingerprint: [UInt64]) {
        self.slot = slot
        self.snapshot = snapshot
        offset = Int(snapshot.pager.offset(ofPage: Layout.metaPages[slot]))
        encoded = fingerprint
    }

    /// Whether commit `txnID` is this snapshot's and its meta slot still holds exactly the bytes
    /// it was decoded from (a slot rewritten since, even with a reused commit number, is not).
    @inline(__always)
    func isCurrent(_ txnID: UInt64) -> Bool {
        guard snapshot.meta.txnID == txnID else { return false }
        let start = snapshot.base + offset
        for (index, word) in encoded.enumerated() where start.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self) != word {
            return false
        }
        return true
    }
}
