import Foundation
import Synchronization

/// Who is reading which commit, which commit readers begin on, and which commit is known durable
/// (docs/STORAGE.md, section 6).
///
/// The table lives in the lock file `<path>-lock`, mapped by every process that opens the file,
/// or, for files that live in memory (tests), in memory private to this process; both run the
/// same protocol. A process claims a slot once (under the table lock) and keeps it in its pool;
/// a read transaction then takes an idle slot from the pool and publishes the commit it reads
/// with one atomic store, without a lock or a system call (LMDB's reader table, `mdb.c`):
///
/// - reader: `current` is loaded, stored in the slot, a full fence, `current` loaded again; when
///   it changed, the reader tries again with the new value;
/// - writer: stores `current` after writing a commit's meta slot; the next writer (after the
///   writer lock, which orders it after that store) scans the slots.
///
/// Either the scan sees the reader's slot, or the reader's second load sees the newer `current`
/// and the reader moves on to it: a page is never reused while a reader that found it current
/// can still reach it.
final class ReaderTable: @unchecked Sendable {
    // @unchecked Sendable: the shared words are only touched through atomics; `pool` is a
    // Mutex; `depth` and the descriptor are guarded by `threadLock`.
    private static let magic: UInt64 = 0x4B43_4F4C_534C_5254 // "TRLSLOCK"
    static let version: UInt32 = 3
    private static let headerSize = 64
    private static let slotSize = 16
    private static let durableOffset = 16
    private static let currentOffset = 24
    /// Slots `0..<n` are the only ones that may have an owner: scans stop at `n`.
    private static let inUseOffset = 32

    private let path: String
    /// The lock file's descriptor (flock for the table lock), or nil for a table in memory.
    private let descriptor: Int32?
    private let base: UnsafeMutableRawPointer
    private let length: Int
    let slotCount: Int
    /// `flock` does not exclude threads of one process sharing the descriptor.
    private let threadLock = NSRecursiveLock()
    private var depth = 0
    /// Slots this table claimed and no transaction is using.
    private let pool = Mutex<[Int]>([])
    private let isClosed = Atomic<Bool>(false)

    /// The reader table in the lock file at `path`, created or rebuilt when it is not one of this
    /// version.
    init(lockFile path: String, slots: Int) throws {
        self.path = path
        let fd = try Platform.open(path: path, create: true)
        do {
            try Platform.lockExclusive(fd, path: path)
            defer { Platform.unlock(fd) }
            let size = try Platform.size(fd, path: path)
            var existing = 0
            if size >= UInt64(Self.headerSize) {
                var header = [UInt8](repeating: 0, count: Self.headerSize)
                try header.withUnsafeMutableBytes { try Platform.read(fd, into: $0, at: 0, path: path) }
                let (magic, version, count) = header.withUnsafeBytes { raw in
                    (raw.loadUnaligned(as: UInt64.self), raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self),
                     raw.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
                }
                if magic == Self.magic && version == Self.version { existing = Int(count) }
            }
            let count = existing > 0 && existing <= 1 << 16 ? existing : slots
            let length = Self.headerSize + count * Self.slotSize
            if existing != count {
                // Written, not only sized: a file extended by truncate is a hole, and the first
                // store into a hole through the map stops the process with SIGBUS when the disk
                // is full. A write fails with ENOSPC instead (a typed `io` error).
                let zeros = [UInt8](repeating: 0, count: length)
                try zeros.withUnsafeBytes { try Platform.write(fd, $0, at: 0, path: path) }
                try Platform.truncate(fd, to: UInt64(length), path: path)
            } else if size < UInt64(length) {
                try Platform.truncate(fd, to: UInt64(length), path: path)
            }
            let base = try Platform.mapReadWrite(fd, length: length, path: path)
            if existing != count {
                Self.initialize(base, length: length, slots: count)
            }
            descriptor = fd
            self.base = base
            self.length = length
            slotCount = count
        } catch {
            Platform.close(fd)
            throw error
        }
    }

    /// A table private to this process (files in memory).
    init(inMemory slots: Int) {
        path = "(reader table in memory)"
        descriptor = nil
        slotCount = slots
        length = Self.headerSize + slots * Self.slotSize
        base = UnsafeMutableRawPointer.allocate(byteCount: length, alignment: 16)
        Self.initialize(base, length: length, slots: slots)
    }

    private static func initialize(_ base: UnsafeMutableRawPointer, length: Int, slots: Int) {
        base.initializeMemory(as: UInt8.self, repeating: 0, count: length)
        base.storeBytes(of: magic, toByteOffset: 0, as: UInt64.self)
        base.storeBytes(of: version, toByteOffset: 8, as: UInt32.self)
        base.storeBytes(of: UInt32(slots), toByteOffset: 12, as: UInt32.self)
    }

    deinit {
        if descriptor != nil {
            Platform.unmap(UnsafeRawPointer(base), length: length)
        } else {
            base.deallocate()
        }
    }

    // MARK: - Shared words

    /// The 64-bit word at `offset`, as an atomic (native byte order: the lock file never leaves
    /// the machine).
    @inline(__always)
    private func word(_ offset: Int) -> UnsafeMutablePointer<Atomic<UInt64>> {
        (base + offset).assumingMemoryBound(to: Atomic<UInt64>.self)
    }

    @inline(__always)
    private func pidWord(_ slot: Int) -> UnsafeMutablePointer<Atomic<UInt32>> {
        (base + Self.headerSize + slot * Self.slotSize).assumingMemoryBound(to: Atomic<UInt32>.self)
    }

    @inline(__always)
    private func txnWord(_ slot: Int) -> UnsafeMutablePointer<Atomic<UInt64>> { word(Self.headerSize + slot * Self.slotSize + 8) }

    /// The number of slots a scan must look at: every slot with an owner is below it. Raised
    /// (under the table lock) before a slot above it is claimed; lowered (under the lock) past
    /// free slots at the end when stale slots are cleared. A damaged value is read as the whole
    /// table.
    var slotsInUse: Int {
        let value = word(Self.inUseOffset).pointee.load(ordering: .sequentiallyConsistent)
        return value <= UInt64(slotCount) ? Int(value) : slotCount
    }

    private func setSlotsInUse(_ count: Int) {
        word(Self.inUseOffset).pointee.store(UInt64(count), ordering: .sequentiallyConsistent)
    }

    /// The newest commit a reader may begin on (0: not set since the table was made).
    var currentTxnID: UInt64 {
        word(Self.currentOffset).pointee.load(ordering: .sequentiallyConsistent)
    }

    /// Makes `txnID` the commit new readers begin on (a writer, after writing its meta slot).
    func publishCurrent(_ txnID: UInt64) {
        word(Self.currentOffset).pointee.store(txnID, ordering: .sequentiallyConsistent)
    }

    /// The newest commit known to be durable.
    var durableTxnID: UInt64 {
        get { word(Self.durableOffset).pointee.load(ordering: .sequentiallyConsistent) }
        set { word(Self.durableOffset).pointee.store(newValue, ordering: .sequentiallyConsistent) }
    }

    // MARK: - The table lock

    /// Runs `body` with the table locked (flock on the lock file, and a lock for this process's
    /// threads): claiming and clearing slots, writing a meta slot, and a writer's scan never
    /// overlap.
    func withLock<R>(_ body: () throws -> R) throws -> R {
        threadLock.lock()
        defer { threadLock.unlock() }
        guard !isClosed.load(ordering: .acquiring) else {
            throw StorageError.misuse("the environment was used after close()")
        }
        depth += 1
        if depth == 1, let descriptor {
            do { try Platform.lockExclusive(descriptor, path: path) } catch { depth -= 1; throw error }
        }
        defer {
            depth -= 1
            if depth == 0, let descriptor { Platform.unlock(descriptor) }
        }
        return try body()
    }

    // MARK: - Readers

    /// An idle slot of this process for a read transaction: from the pool, or claimed from the
    /// table (under the lock; dead processes' slots are cleared when none is free).
    func takeSlot() throws -> Int {
        if let slot = pool.withLock({ $0.popLast() }) { return slot }
        return try withLock {
            let pid = UInt32(bitPattern: Platform.processID)
            for attempt in 0..<2 {
                for slot in 0..<slotCount where pidWord(slot).pointee.load(ordering: .sequentiallyConsistent) == 0 {
                    // Scans must see the slot before it can hold a commit.
                    if slot >= slotsInUse { setSlotsInUse(slot + 1) }
                    txnWord(slot).pointee.store(0, ordering: .sequentiallyConsistent)
                    pidWord(slot).pointee.store(pid, ordering: .sequentiallyConsistent)
                    return slot
                }
                if attempt == 0 { clearStaleSlots() }
            }
            throw readersFullError(slotCount)
        }
    }

    /// Marks `slot` as reading the commit that is current, and returns that commit's number: the
    /// lock-free protocol in the type's comment.
    @inline(__always)
    func pinCurrent(_ slot: Int) -> UInt64 {
        let current = word(Self.currentOffset)
        let reading = txnWord(slot)
        while true {
            let txnID = current.pointee.load(ordering: .acquiring)
            reading.pointee.store(txnID, ordering: .sequentiallyConsistent)
            atomicMemoryFence(ordering: .sequentiallyConsistent)
            if current.pointee.load(ordering: .sequentiallyConsistent) == txnID { return txnID }
        }
    }

    /// Marks `slot` as reading `txnID` (the table must be locked: the scan cannot run meanwhile).
    func pin(_ slot: Int, to txnID: UInt64) {
        txnWord(slot).pointee.store(txnID, ordering: .sequentiallyConsistent)
    }

    /// Ends the read of `slot` and gives the slot back to this process's pool (to the table once
    /// the table is closed).
    func release(_ slot: Int) {
        guard slot >= 0 && slot < slotCount else { return }
        txnWord(slot).pointee.store(0, ordering: .releasing)
        if isClosed.load(ordering: .acquiring) {
            pidWord(slot).pointee.store(0, ordering: .releasing)
        } else {
            pool.withLock { $0.append(slot) }
        }
    }

    /// Clears slots of processes that no longer exist (LMDB's `mdb_reader_check`; this process's
    /// own slots are skipped: it is alive), then lowers `slotsInUse` past free slots at the end.
    /// The table must be locked.
    private func clearStaleSlots() {
        let ownPid = UInt32(bitPattern: Platform.processID)
        let count = slotsInUse
        var inUse = 0
        for slot in 0..<count {
            let pid = pidWord(slot).pointee.load(ordering: .sequentiallyConsistent)
            if pid != 0 && pid != ownPid && !Platform.processIsAlive(Int32(bitPattern: pid)) {
                txnWord(slot).pointee.store(0, ordering: .sequentiallyConsistent)
                pidWord(slot).pointee.store(0, ordering: .sequentiallyConsistent)
            } else if pid != 0 {
                inUse = slot + 1
            }
        }
        if inUse < count { setSlotsInUse(inUse) }
    }

    /// The oldest commit a live reader of any process uses, if any (the table must be locked).
    func oldestReader() -> UInt64? {
        clearStaleSlots()
        var oldest = UInt64.max
        for slot in 0..<slotsInUse {
            let txnID = txnWord(slot).pointee.load(ordering: .sequentiallyConsistent)
            if txnID != 0 && txnID < oldest { oldest = txnID }
        }
        return oldest == UInt64.max ? nil : oldest
    }

    /// The slots claimed by other processes (live, or dead and not yet cleared), for tests.
    var slotsOfOtherProcesses: Int {
        let pid = UInt32(bitPattern: Platform.processID)
        return (0..<slotsInUse).filter {
            let owner = pidWord($0).pointee.load(ordering: .sequentiallyConsistent)
            return owner != 0 && owner != pid
        }.count
    }

    /// Gives this process's idle slots back to the table and closes the lock file. Slots of
    /// transactions still open are given back when they end; the memory stays mapped until the
    /// last of them lets go of the table.
    func close() {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let idle = pool.withLock { slots in
            defer { slots.removeAll() }
            return slots
        }
        for slot in idle { pidWord(slot).pointee.store(0, ordering: .releasing) }
        threadLock.lock()
        defer { threadLock.unlock() }
        if let descriptor { Platform.close(descriptor) }
    }
}

func readersFullError(_ slots: Int) -> StorageError {
    StorageError(.readersFull, "TrellisStorage: all \(slots) reader slots are in use by live transactions. End "
        + "read transactions sooner, or open the environment with more readerSlots.")
}
