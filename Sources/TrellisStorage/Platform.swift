// The one file of TrellisStorage that calls the platform's C library. Everything else goes
// through `Platform`, whose functions return Swift values or throw `StorageError.io`.
//
// Compiled and tested on Linux (Glibc). The Darwin branch is written and reviewed, not compiled
// here: it differs in `F_FULLFSYNC` for durable syncs (docs/ARCHITECTURE.md, "Platforms", lists
// what was reviewed). Musl follows Glibc. Windows (WinSDK) is not supported yet and fails to
// compile with a clear message.

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
#error("TrellisStorage supports Darwin, Glibc and Musl platforms; a WinSDK port is not written yet")
#endif

/// Thin, throwing wrappers of the system calls TrellisStorage needs.
enum Platform {
    /// The current `errno`.
    static var lastError: Int32 { errno }

    /// A description of an `errno` value (`strerror`).
    static func describe(errorNumber: Int32) -> String {
        guard let text = strerror(errorNumber) else { return "error \(errorNumber)" }
        return String(cString: text)
    }

    /// Opens (creating when asked) a file for reading and writing, or only for reading;
    /// returns its descriptor.
    static func open(path: String, create: Bool, readOnly: Bool = false) throws -> Int32 {
        var flags = (readOnly ? O_RDONLY : O_RDWR) | O_CLOEXEC
        if create { flags |= O_CREAT }
        let descriptor = path.withCString { Glue.open($0, flags, 0o644) }
        if descriptor < 0 { throw StorageError.io("open", path: path, errno: errno) }
        return descriptor
    }

    /// `EFBIG`: a commit would grow the file past its size limit.
    static let fileTooLarge = EFBIG
    /// Errors of opening a lock file that a read-only open may do without (a read-only file
    /// system, or a folder it cannot create the lock file in).
    static func isUnwritable(_ error: StorageError) -> Bool {
        guard case .io(_, let number) = error.code else { return false }
        return number == EROFS || number == EACCES || number == EPERM
    }

    /// Whether `error` is `EROFS`.
    static func isReadOnlyFileSystem(_ error: StorageError) -> Bool {
        guard case .io(_, let number) = error.code else { return false }
        return number == EROFS
    }

    /// Closes a descriptor, ignoring errors (nothing useful can be done about them).
    static func close(_ descriptor: Int32) {
        _ = Glue.close(descriptor)
    }

    /// How `link` ended.
    enum LinkOutcome { case linked, destinationExists, unsupported }

    /// Gives the file at `source` the second name `destination` (a hard link), never replacing
    /// a file already there: the way a whole new file appears at its path at once.
    /// `unsupported`: the file system has no hard links (FAT, some network and FUSE ones).
    static func link(_ source: String, to destination: String) throws -> LinkOutcome {
        let result = retryingInterrupts { source.withCString { from in destination.withCString { Glue.link(from, $0) } } }
        if result == 0 { return .linked }
        let failure = errno
        if failure == EEXIST { return .destinationExists }
        if failure == EPERM || failure == EXDEV || failure == ENOTSUP || failure == EMLINK || failure == EOPNOTSUPP {
            return .unsupported
        }
        throw StorageError.io("link", path: destination, errno: failure)
    }

    /// Removes a name of a file; a missing one is no error.
    static func remove(path: String) {
        _ = path.withCString { unlink($0) }
    }

    /// The folder holding `path` ("." for a bare name, "/" at the root) and the name in it.
    static func folderAndName(of path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let folder = slash == path.startIndex ? "/" : String(path[..<slash])
        return (folder, String(path[path.index(after: slash)...]))
    }

    /// Syncs the folder holding `path`, so that a name made in it (`link`) is durable.
    static func syncFolder(of path: String) throws {
        let folder = folderAndName(of: path).folder
        let descriptor = folder.withCString { Glue.open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0) }
        if descriptor < 0 { throw StorageError.io("open", path: folder, errno: errno) }
        defer { close(descriptor) }
        if retryingInterrupts({ fsync(descriptor) }) != 0 { throw StorageError.io("fsync", path: folder, errno: errno) }
    }

    /// Whether a file exists at `path`.
    static func exists(path: String) -> Bool {
        path.withCString { access($0, F_OK) } == 0
    }

    /// Calls `body` again while it fails with `EINTR` (a signal arrived); returns its result:
    /// non-negative on success, -1 with `errno` set otherwise.
    @inline(__always)
    private static func retryingInterrupts<Result: BinaryInteger>(_ body: () -> Result) -> Result {
        while true {
            let result = body()
            if result >= 0 || errno != EINTR { return result }
        }
    }

    /// Moves `count` bytes by repeated partial transfers: `step(done)` moves some of the bytes
    /// from `done` on and returns how many (0 at the end of the file, -1 with `errno` set).
    /// Returns how many bytes moved (fewer than `count` only at the end of the file).
    private static func transfer(_ count: Int, call: String, path: String, _ step: (_ done: Int) -> Int) throws -> Int {
        var done = 0
        while done < count {
            let moved = retryingInterrupts { step(done) }
            if moved < 0 { throw StorageError.io(call, path: path, errno: errno) }
            if moved == 0 { break }
            done += moved
        }
        return done
    }

    /// Reads exactly `buffer.count` bytes at `offset`; bytes past the end of the file read as 0.
    static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64,
                     path: String) throws {
        guard let base = buffer.baseAddress else { return }
        let done = try transfer(buffer.count, call: "pread", path: path) { done in
            pread(descriptor, base + done, buffer.count - done, off_t(offset) + off_t(done))
        }
        (base + done).initializeMemory(as: UInt8.self, repeating: 0, count: buffer.count - done)
    }

    /// Writes all of `bytes` at `offset`.
    static func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: UInt64,
                      path: String) throws {
        guard let base = bytes.baseAddress else { return }
        let done = try transfer(bytes.count, call: "pwrite", path: path) { done in
            pwrite(descriptor, base + done, bytes.count - done, off_t(offset) + off_t(done))
        }
        // pwrite never returns 0 for a non-empty write to a regular file; stop rather than spin.
        if done < bytes.count { throw StorageError.io("pwrite", path: path, errno: EIO) }
    }

    /// The most pieces one `pwritev` takes (POSIX guarantees at least 16; Linux and Darwin
    /// take 1,024).
    private static let largestGather = 1024

    /// Writes all of `pieces`, one after another from `offset`, with `pwritev`: one system call
    /// for a run of pages, none of them copied first. A partial write goes on from the byte
    /// where it stopped.
    static func write(_ descriptor: Int32, gathering pieces: UnsafeBufferPointer<UnsafeRawBufferPointer>, at offset: UInt64,
                      path: String) throws {
        try withUnsafeTemporaryAllocation(of: iovec.self, capacity: max(pieces.count, 1)) { vectors in
            guard let first = vectors.baseAddress else { return }
            var count = 0
            for piece in pieces where piece.count > 0 {
                vectors[count] = iovec(iov_base: UnsafeMutableRawPointer(mutating: piece.baseAddress), iov_len: piece.count)
                count += 1
            }
            var next = 0
            var done = 0
            while next < count {
                let moved = retryingInterrupts {
                    pwritev(descriptor, first + next, Int32(min(count - next, largestGather)), off_t(offset) + off_t(done))
                }
                if moved < 0 { throw StorageError.io("pwritev", path: path, errno: errno) }
                // pwritev never returns 0 for a non-empty write to a regular file; stop rather than spin.
                if moved == 0 { throw StorageError.io("pwritev", path: path, errno: EIO) }
                done += moved
                var left = moved
                while next < count, left >= vectors[next].iov_len {
                    left -= vectors[next].iov_len
                    next += 1
                }
                if left > 0, let base = vectors[next].iov_base {
                    vectors[next] = iovec(iov_base: base + left, iov_len: vectors[next].iov_len - left)
                }
            }
        }
    }

    /// Makes every write so far durable: `F_FULLFSYNC` on Darwin (plain `fsync` only reaches the
    /// drive's cache there), `fdatasync` elsewhere.
    static func sync(_ descriptor: Int32, path: String) throws {
        #if canImport(Darwin)
        if retryingInterrupts({ fcntl(descriptor, F_FULLFSYNC) }) == 0 { return }
        // Some file systems (network, FAT, some FUSE) refuse F_FULLFSYNC: only then fall back to
        // fsync. Any other failure (EIO) is the sync failing, and must not be hidden by an fsync
        // that succeeds.
        let refusal = errno
        guard refusal == ENOTSUP || refusal == EINVAL || refusal == ENOTTY else {
            throw StorageError.io("fcntl(F_FULLFSYNC)", path: path, errno: refusal)
        }
        if retryingInterrupts({ fsync(descriptor) }) != 0 { throw StorageError.io("fsync", path: path, errno: errno) }
        #else
        if retryingInterrupts({ fdatasync(descriptor) }) != 0 {
            throw StorageError.io("fdatasync", path: path, errno: errno)
        }
        #endif
    }

    /// The file's size in bytes.
    static func size(_ descriptor: Int32, path: String) throws -> UInt64 {
        var status = stat()
        if fstat(descriptor, &status) != 0 { throw StorageError.io("fstat", path: path, errno: errno) }
        return UInt64(status.st_size)
    }

    /// Sets the file's size.
    static func truncate(_ descriptor: Int32, to size: UInt64, path: String) throws {
        if retryingInterrupts({ ftruncate(descriptor, off_t(size)) }) != 0 {
            throw StorageError.io("ftruncate", path: path, errno: errno)
        }
    }

    /// Maps `length` bytes of the file read-only and shared. Pages past the end of the file must
    /// not be touched (SIGBUS); the engine only reads below its high-water mark.
    static func mapReadOnly(_ descriptor: Int32, length: Int, path: String) throws -> UnsafeRawPointer {
        let address = mmap(nil, length, PROT_READ, MAP_SHARED, descriptor, 0)
        guard let address, address != MAP_FAILED else {
            throw StorageError.io("mmap", path: path, errno: errno)
        }
        return UnsafeRawPointer(address)
    }

    /// Maps `length` bytes of the file for reading and writing (the lock file).
    static func mapReadWrite(_ descriptor: Int32, length: Int, path: String) throws -> UnsafeMutableRawPointer {
        let address = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0)
        guard let address, address != MAP_FAILED else {
            throw StorageError.io("mmap", path: path, errno: errno)
        }
        return address
    }

    /// Removes a mapping made by `mapReadOnly` or `mapReadWrite`.
    static func unmap(_ address: UnsafeRawPointer, length: Int) {
        _ = munmap(UnsafeMutableRawPointer(mutating: address), length)
    }

    /// Takes `flock(LOCK_EX)` on the descriptor if no one holds it; false when someone does.
    static func tryLockExclusive(_ descriptor: Int32, path: String) throws -> Bool {
        if retryingInterrupts({ flock(descriptor, LOCK_EX | LOCK_NB) }) == 0 { return true }
        if errno == EWOULDBLOCK { return false }
        throw StorageError.io("flock", path: path, errno: errno)
    }

    /// Takes `flock(LOCK_EX)` on the descriptor, waiting for it. `flock` locks belong to the open
    /// file description, so two descriptors of one process exclude each other too.
    static func lockExclusive(_ descriptor: Int32, path: String) throws {
        if retryingInterrupts({ flock(descriptor, LOCK_EX) }) != 0 {
            throw StorageError.io("flock", path: path, errno: errno)
        }
    }

    /// Releases a lock taken by `lockExclusive`.
    static func unlock(_ descriptor: Int32) {
        _ = flock(descriptor, LOCK_UN)
    }

    /// This process's id.
    static var processID: Int32 { Int32(getpid()) }

    /// Whether a process with this id exists (`kill(pid, 0)`; EPERM means it exists).
    static func processIsAlive(_ pid: Int32) -> Bool {
        if pid <= 0 { return false }
        if kill(pid_t(pid), 0) == 0 { return true }
        return errno != ESRCH
    }
}

/// The C functions whose names clash with `Platform`'s own.
private enum Glue {
    static func open(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32 {
        #if canImport(Darwin)
        return Darwin.open(path, flags, mode)
        #elseif canImport(Glibc)
        return Glibc.open(path, flags, mode)
        #else
        return Musl.open(path, flags, mode)
        #endif
    }

    static func link(_ from: UnsafePointer<CChar>, _ to: UnsafePointer<CChar>) -> Int32 {
        #if canImport(Darwin)
        return Darwin.link(from, to)
        #elseif canImport(Glibc)
        return Glibc.link(from, to)
        #else
        return Musl.link(from, to)
        #endif
    }

    static func close(_ descriptor: Int32) -> Int32 {
        #if canImport(Darwin)
        return Darwin.close(descriptor)
        #elseif canImport(Glibc)
        return Glibc.close(descriptor)
        #else
        return Musl.close(descriptor)
        #endif
    }
}
