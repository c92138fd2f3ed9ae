/// The file an environment stores its pages in. `PosixFile` is the real one; tests substitute a
/// file that records every write and sync (simulated power loss) or fails on command (I/O errors).
///
/// Offsets and sizes are in bytes. Every method throws `StorageError` with code `.io` on failure.
public protocol StorageFile: AnyObject {
    /// A name for messages (the path of a real file).
    var name: String { get }
    /// The file's size.
    func size() throws -> UInt64
    /// Reads `buffer.count` bytes at `offset`; bytes past the end read as zero.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws
    /// Writes `bytes` at `offset`, extending the file if needed.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws
    /// Writes `pieces` one after another from `offset` as one write, extending the file if
    /// needed (a commit's run of pages that follow one another in the file). The default copies
    /// them into one buffer and calls `write(_:at:)` once; `PosixFile` hands them to `pwritev`.
    func write(gathering pieces: UnsafeBufferPointer<UnsafeRawBufferPointer>, at offset: UInt64) throws
    /// Sets the file's size.
    func truncate(to size: UInt64) throws
    /// Makes every write so far durable (one `fdatasync` / `F_FULLFSYNC`).
    func sync() throws
    /// A read-only view of at least the first `length` bytes, which shows later writes and stays
    /// valid until the file is closed (an earlier view stays valid after a later, longer one).
    func map(length: UInt64) throws -> UnsafeRawPointer
    /// Takes the writer lock across processes, waiting for it.
    func lockWriter() throws
    /// Takes the writer lock if no one holds it; false when another writer does.
    func tryLockWriter() throws -> Bool
    /// Releases the writer lock.
    func unlockWriter()
    /// Releases the file's resources (maps, descriptor).
    func close()
}

/// A file of the file system, read through a shared memory map and written with `pwrite`.
public final class PosixFile: StorageFile {
    public let name: String
    private let descriptor: Int32
    private var maps: [(address: UnsafeRawPointer, length: Int)] = []
    private var isClosed = false
    /// The `fdatasync` / `F_FULLFSYNC` calls made so far (benchmarks report syncs per commit).
    public private(set) var syncCount = 0
    /// The `pwrite` and `pwritev` calls made so far and the bytes they wrote (benchmarks report
    /// them per commit). Not checked for exclusive access at run time (~70 instructions a
    /// write): a file is written by its one writer at a time, and these only count.
    @exclusivity(unchecked) public private(set) var writeCount = 0
    @exclusivity(unchecked) public private(set) var bytesWritten = 0
    /// The times the file's size was set (`ftruncate`: growth in steps, compaction's cut).
    public private(set) var truncateCount = 0

    /// Opens (or creates, when `create` is true) the file at `path`; with `readOnly`, with
    /// `O_RDONLY` (writes then fail with `EBADF`).
    public init(path: String, create: Bool = true, readOnly: Bool = false) throws {
        name = path
        descriptor = try Platform.open(path: path, create: create && !readOnly, readOnly: readOnly)
    }

    deinit { close() }

    public func size() throws -> UInt64 { try Platform.size(descriptor, path: name) }

    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws {
        try Platform.read(descriptor, into: buffer, at: offset, path: name)
    }

    public func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        writeCount += 1
        bytesWritten += bytes.count
        try Platform.write(descriptor, bytes, at: offset, path: name)
    }

    public func write(gathering pieces: UnsafeBufferPointer<UnsafeRawBufferPointer>, at offset: UInt64) throws {
        writeCount += 1
        for piece in pieces { bytesWritten += piece.count }
        try Platform.write(descriptor, gathering: pieces, at: offset, path: name)
    }

    public func truncate(to size: UInt64) throws {
        truncateCount += 1
        try Platform.truncate(descriptor, to: size, path: name)
    }

    public func sync() throws {
        syncCount += 1
        try Platform.sync(descriptor, path: name)
    }

    public func map(length: UInt64) throws -> UnsafeRawPointer {
        if let last = maps.last, UInt64(last.length) >= length { return last.address }
        // Generous steps: the map may extend past the end of the file (never touched there).
        let previous = UInt64(maps.last?.length ?? 0)
        let wanted = max(length, previous * 2, 64 << 20)
        let address = try Platform.mapReadOnly(descriptor, length: Int(wanted), path: name)
        maps.append((address, Int(wanted)))
        return address
    }

    public func lockWriter() throws { try Platform.lockExclusive(descriptor, path: name) }

    public func tryLockWriter() throws -> Bool { try Platform.tryLockExclusive(descriptor, path: name) }

    public func unlockWriter() { Platform.unlock(descriptor) }

    public func close() {
        if isClosed { return }
        isClosed = true
        for map in maps { Platform.unmap(map.address, length: map.length) }
        maps.removeAll()
        Platform.close(descriptor)
    }
}

extension StorageFile {
    /// `write(gathering:at:)` as one `write(_:at:)` of the pieces copied into one buffer.
    public func write(gathering pieces: UnsafeBufferPointer<UnsafeRawBufferPointer>, at offset: UInt64) throws {
        let length = pieces.reduce(0) { $0 + $1.count }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(length, 1), alignment: 16)
        defer { buffer.deallocate() }
        var at = 0
        for piece in pieces {
            if let source = piece.baseAddress { (buffer + at).copyMemory(from: source, byteCount: piece.count) }
            at += piece.count
        }
        try write(UnsafeRawBufferPointer(start: buffer, count: length), at: offset)
    }

    /// Files without a lock of their own (in memory, for tests) take it waiting, as a writer would.
    public func tryLockWriter() throws -> Bool {
        try lockWriter()
        return true
    }
}
