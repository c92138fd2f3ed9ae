import Foundation

/// Whether any process has a database file open, told the way LMDB tells it: every process
/// with the file open holds a shared lock on the first byte of its lock file, so a write lock
/// there is granted only when nobody has it open. Held, it also makes other processes'
/// opens wait until it is released (LMDB waits for that lock), which is what compacting or
/// deleting a file in place needs.
///
/// POSIX locks belong to the process, not the descriptor: take it only when no environment of
/// this process has the file open (``FileState/reserve(path:for:)`` first), or closing it would
/// release that environment's shared lock too.
final class ExclusiveFileUse {
    /// Why the lock was not taken.
    enum Refusal: Error {
        /// Another process has the file open.
        case inUse
        /// The lock file could not be opened or created (`errno`): ENOENT when its folder is
        /// missing, EACCES or EROFS when it cannot be written.
        case lockFileUnavailable(code: Int32)
    }

    private let descriptor: Int32

    /// Takes the lock, or throws why not.
    init(taking path: String) throws(Refusal) {
        let descriptor = open(path + "-lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw .lockFileUnavailable(code: errno) }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0
        lock.l_len = 1
        guard fcntl(descriptor, F_SETLK, &lock) == 0 else {
            close(descriptor)
            throw .inUse
        }
        self.descriptor = descriptor
    }

    /// Takes the lock, or returns nil when another process has the file open (or the lock
    /// file cannot be opened).
    convenience init?(path: String) {
        do { try self.init(taking: path) } catch { return nil }
    }

    deinit {
        // Closing the descriptor releases the process's locks on the file.
        close(descriptor)
    }
}
