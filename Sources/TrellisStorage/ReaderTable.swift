import Foundation

/// Who is reading which commit, and which commit is known durable (docs/STORAGE.md, section 6).
/// The lock file is the table shared by processes; `LocalReaderTable` serves one process (files
/// that live in memory, in tests).
protocol ReaderTable: AnyObject {
    /// Runs `body` with the table locked: taking or releasing a slot, writing a meta slot, and a
    /// writer's scan never overlap.
    func withLock<R>(_ body: () throws -> R) throws -> R
    /// Takes a slot for a reader of commit `txnID` (the table must be locked).
    func register(_ txnID: UInt64) throws -> Int
    /// Releases a slot.
    func release(_ slot: Int)
    /// The oldest commit a live reader uses, if any (the table must be locked).
    func oldestReader() -> UInt64?
    /// The newest commit known to be durable (the table must be locked to change it).
    var durableTxnID: UInt64 { get set }
    /// Releases the table's resources.
    func close()
}

/// A reader table for one process.
final class LocalReaderTable: ReaderTable, @unchecked Sendable {
    private let lock = NSRecursiveLock()
    private var slots: [UInt64]
    var durableTxnID: UInt64 = 0

    init(slots: Int) {
        self.slots = Array(repeating: 0, count: slots)
    }

    func withLock<R>(_ body: () throws -> R) throws -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    func register(_ txnID: UInt64) throws -> Int {
        guard let slot = slots.firstIndex(of: 0) else { throw readersFullError(slots.count) }
        slots[slot] = txnID
        return slot
    }

    func release(_ slot: Int) {
        lock.lock()
        defer { lock.unlock() }
        if slot >= 0 && slot < slots.count { slots[slot] = 0 }
    }

    func oldestReader() -> UInt64? { slots.filter { $0 != 0 }.min() }

    func close() {}
}

func readersFullError(_ slots: Int) -> StorageError {
    StorageError(.readersFull, "TrellisStorage: all \(slots) reader slots are in use by live transactions. End "
        + "read transactions sooner, or open the environment with more readerSlots.")
}

/// The reader table in the lock file `<path>-lock`, shared by every process that opens the file.
final class LockFileReaderTable: ReaderTable, @unchecked Sendable {
    private static let magic: UInt64 = 0x4B43_4F4C_534C_5254 // "TRLSLOCK"
    private static let headerSize = 64
    private static let slotSize = 16

    private let path: String
    private let descriptor: Int32
    private let base: UnsafeMutableRawPointer
    private let length: Int
    private let slotCount: Int
    /// `flock` does not exclude threads of one process sharing the descriptor.
    private let threadLock = NSRecursiveLock()
    private var depth = 0

    init(path: String, slots: Int) throws {
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
                let magic = header.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
                if magic == Self.magic {
                    existing = Int(header.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 12, as: UInt32.self)) })
                }
            }
            let count = existing > 0 && existing <= 1 << 16 ? existing : slots
            let length = Self.headerSize + count * Self.slotSize
            if existing != count || size < UInt64(length) {
                try Platform.truncate(fd, to: UInt64(length), path: path)
            }
            let base = try Platform.mapReadWrite(fd, length: length, path: path)
            if existing != count {
                base.initializeMemory(as: UInt8.self, repeating: 0, count: length)
                base.storeLE(Self.magic, at: 0)
                base.storeLE(UInt32(1), at: 8)
                base.storeLE(UInt32(count), at: 12)
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

    func withLock<R>(_ body: () throws -> R) throws -> R {
        threadLock.lock()
        defer { threadLock.unlock() }
        depth += 1
        if depth == 1 {
            do { try Platform.lockExclusive(descriptor, path: path) } catch { depth -= 1; throw error }
        }
        defer {
            depth -= 1
            if depth == 0 { Platform.unlock(descriptor) }
        }
        return try body()
    }

    private func slotOffset(_ slot: Int) -> Int { Self.headerSize + slot * Self.slotSize }

    func register(_ txnID: UInt64) throws -> Int {
        let pid = Platform.processID
        for attempt in 0..<2 {
            for slot in 0..<slotCount where base.loadLE(UInt64.self, at: slotOffset(slot) + 8) == 0 {
                base.storeLE(pid, at: slotOffset(slot))
                base.storeLE(txnID, at: slotOffset(slot) + 8)
                return slot
            }
            if attempt == 0 { clearStaleSlots() }
        }
        throw readersFullError(slotCount)
    }

    func release(_ slot: Int) {
        guard slot >= 0 && slot < slotCount else { return }
        _ = try? withLock {
            base.storeLE(UInt64(0), at: slotOffset(slot) + 8)
            base.storeLE(Int32(0), at: slotOffset(slot))
        }
    }

    /// Clears slots of processes that no longer exist (LMDB's `mdb_reader_check`).
    private func clearStaleSlots() {
        for slot in 0..<slotCount where base.loadLE(UInt64.self, at: slotOffset(slot) + 8) != 0 {
            let pid = base.loadLE(Int32.self, at: slotOffset(slot))
            if !Platform.processIsAlive(pid) {
                base.storeLE(UInt64(0), at: slotOffset(slot) + 8)
                base.storeLE(Int32(0), at: slotOffset(slot))
            }
        }
    }

    func oldestReader() -> UInt64? {
        clearStaleSlots()
        var oldest: UInt64?
        for slot in 0..<slotCount {
            let txnID = base.loadLE(UInt64.self, at: slotOffset(slot) + 8)
            if txnID != 0 { oldest = min(oldest ?? txnID, txnID) }
        }
        return oldest
    }

    var durableTxnID: UInt64 {
        get { base.loadLE(UInt64.self, at: 16) }
        set { base.storeLE(newValue, at: 16) }
    }

    func close() {
        Platform.unmap(UnsafeRawPointer(base), length: length)
        Platform.close(descriptor)
    }
}
