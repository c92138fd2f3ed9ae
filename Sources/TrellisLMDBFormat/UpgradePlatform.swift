// The one file of TrellisLMDBFormat that calls the platform's C library: mapping the old file,
// the lock LMDB's own processes take, and the file-system steps of the conversion (link,
// rename, unlink, directory sync). Compiled and tested on Linux (Glibc); the Darwin branch is
// written and reviewed, not compiled here.

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
#error("TrellisLMDBFormat supports Darwin, Glibc and Musl platforms")
#endif

/// Thin, throwing wrappers of the system calls the reader and the conversion need.
enum UpgradePlatform {
    static func describe(errorNumber: Int32) -> String {
        guard let text = strerror(errorNumber) else { return "error \(errorNumber)" }
        return String(cString: text)
    }

    /// A file's contents mapped read-only. Unmapped by `close()` or when released.
    final class MappedFile {
        let bytes: UnsafeRawBufferPointer
        private var isOpen = true

        /// Maps the first `length` bytes of `path`; nil length maps the whole file.
        init(path: String, length requested: Int?) throws(LMDBFormatError) {
            let descriptor = path.withCString { open($0, O_RDONLY | O_CLOEXEC) }
            guard descriptor >= 0 else { throw LMDBFormatError.io("open", path: path, errno: errno) }
            defer { _ = Glue.close(descriptor) }
            var status = stat()
            guard fstat(descriptor, &status) == 0 else { throw LMDBFormatError.io("fstat", path: path, errno: errno) }
            let size = Int(status.st_size)
            let length = min(requested ?? size, size)
            guard length > 0 else {
                bytes = UnsafeRawBufferPointer(start: nil, count: 0)
                return
            }
            guard let base = mmap(nil, length, PROT_READ, MAP_SHARED, descriptor, 0), base != MAP_FAILED else {
                throw LMDBFormatError.io("mmap", path: path, errno: errno)
            }
            bytes = UnsafeRawBufferPointer(start: base, count: length)
        }

        func close() {
            guard isOpen else { return }
            isOpen = false
            if let base = bytes.baseAddress { _ = munmap(UnsafeMutableRawPointer(mutating: base), bytes.count) }
        }

        deinit { close() }
    }

    /// The size of the file at `path`, or nil when there is none.
    static func size(path: String) -> Int? {
        var status = stat()
        guard path.withCString({ stat($0, &status) }) == 0 else { return nil }
        return Int(status.st_size)
    }

    static func exists(_ path: String) -> Bool { path.withCString { access($0, F_OK) } == 0 }

    /// The first `count` bytes of a file (fewer when it is shorter), or nil when it cannot be read.
    static func prefix(path: String, count: Int) -> [UInt8]? {
        let descriptor = path.withCString { open($0, O_RDONLY | O_CLOEXEC) }
        guard descriptor >= 0 else { return nil }
        defer { _ = Glue.close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: count)
        let got = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, 0) }
        guard got >= 0 else { return nil }
        return Array(buffer[0..<got])
    }

    /// The lock every LMDB process holds (shared) on the first byte of `<file>-lock` while it has
    /// the file open: held exclusively, nobody else has the file open and LMDB processes that
    /// try wait until it is released. Released by `release()` or when the value goes.
    final class ExclusiveUse {
        private var descriptor: Int32

        /// Takes the lock, or returns nil when another process has the file open.
        init?(lockPath: String) throws(LMDBFormatError) {
            let descriptor = lockPath.withCString { open($0, O_RDWR | O_CREAT | O_CLOEXEC, 0o644) }
            guard descriptor >= 0 else { throw LMDBFormatError.io("open", path: lockPath, errno: errno) }
            var lock = flock()
            lock.l_type = Int16(F_WRLCK)
            lock.l_whence = Int16(SEEK_SET)
            lock.l_start = 0
            lock.l_len = 1
            guard fcntl(descriptor, F_SETLK, &lock) == 0 else {
                _ = Glue.close(descriptor)
                return nil
            }
            self.descriptor = descriptor
        }

        func release() {
            guard descriptor >= 0 else { return }
            _ = Glue.close(descriptor)  // releases the process's locks on the file
            descriptor = -1
        }

        deinit { release() }
    }

    /// A second name for a file (a hard link), or a copy of it when the file system has no links.
    /// The copy is synced.
    static func linkOrCopy(_ source: String, to destination: String) throws(LMDBFormatError) {
        if source.withCString({ from in destination.withCString { link(from, $0) } }) == 0 { return }
        let linkError = errno
        guard linkError == EPERM || linkError == EXDEV || linkError == ENOTSUP || linkError == EMLINK
            || linkError == EOPNOTSUPP
        else { throw LMDBFormatError.io("link", path: destination, errno: linkError) }
        try copy(source, to: destination)
    }

    private static func copy(_ source: String, to destination: String) throws(LMDBFormatError) {
        let input = source.withCString { open($0, O_RDONLY | O_CLOEXEC) }
        guard input >= 0 else { throw LMDBFormatError.io("open", path: source, errno: errno) }
        defer { _ = Glue.close(input) }
        let output = destination.withCString { open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        guard output >= 0 else { throw LMDBFormatError.io("open", path: destination, errno: errno) }
        defer { _ = Glue.close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let got = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if got < 0 {
                if errno == EINTR { continue }
                throw LMDBFormatError.io("read", path: source, errno: errno)
            }
            if got == 0 { break }
            var done = 0
            while done < got {
                let wrote = buffer.withUnsafeBytes { chunk in
                    write(output, UnsafeRawBufferPointer(rebasing: chunk[done..<got]).baseAddress, got - done)
                }
                if wrote < 0 {
                    if errno == EINTR { continue }
                    throw LMDBFormatError.io("write", path: destination, errno: errno)
                }
                done += wrote
            }
        }
        guard fsync(output) == 0 else { throw LMDBFormatError.io("fsync", path: destination, errno: errno) }
    }

    /// Renames `source` over `destination` (atomically replacing it).
    static func rename(_ source: String, to destination: String) throws(LMDBFormatError) {
        guard source.withCString({ from in destination.withCString { Glue.rename(from, $0) } }) == 0 else {
            throw LMDBFormatError.io("rename", path: source, errno: errno)
        }
    }

    /// Removes a file; a missing file is no error.
    static func remove(_ path: String) throws(LMDBFormatError) {
        guard path.withCString({ unlink($0) }) == 0 || errno == ENOENT else {
            throw LMDBFormatError.io("unlink", path: path, errno: errno)
        }
    }

    /// Syncs a file's contents.
    static func syncFile(_ path: String) throws(LMDBFormatError) {
        let descriptor = path.withCString { open($0, O_RDONLY | O_CLOEXEC) }
        guard descriptor >= 0 else { throw LMDBFormatError.io("open", path: path, errno: errno) }
        defer { _ = Glue.close(descriptor) }
        guard fsync(descriptor) == 0 else { throw LMDBFormatError.io("fsync", path: path, errno: errno) }
    }

    /// Syncs the directory holding `path`, so that renames, links and removals in it are durable.
    static func syncDirectory(of path: String) throws(LMDBFormatError) {
        let directory = path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let descriptor = directory.withCString { open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard descriptor >= 0 else { throw LMDBFormatError.io("open", path: directory, errno: errno) }
        defer { _ = Glue.close(descriptor) }
        guard fsync(descriptor) == 0 else { throw LMDBFormatError.io("fsync", path: directory, errno: errno) }
    }
}

/// The C library's functions whose names the wrappers above reuse.
private enum Glue {
    static func close(_ descriptor: Int32) -> Int32 {
        #if canImport(Darwin)
        Darwin.close(descriptor)
        #elseif canImport(Glibc)
        Glibc.close(descriptor)
        #else
        Musl.close(descriptor)
        #endif
    }


    static func rename(_ from: UnsafePointer<CChar>, _ to: UnsafePointer<CChar>) -> Int32 {
        #if canImport(Darwin)
        Darwin.rename(from, to)
        #elseif canImport(Glibc)
        Glibc.rename(from, to)
        #else
        Musl.rename(from, to)
        #endif
    }
}
