#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file behind an in-memory Realm (``Realm/Configuration/inMemoryIdentifier``), removed when
/// the Realm's last instance closes, as realm-core removes an in-memory Realm's file on its last
/// close. Without it every in-memory Realm a process made (a test suite makes thousands) stayed
/// in the temporary directory.
///
/// The file is identified by device and inode at open: a later open of the same identifier
/// (which starts by removing a closed file, see `FileState.discardClosedInMemoryData`) makes a
/// new file that this one's close must leave alone.
struct InMemoryFile: Sendable {
    let path: String
    private let device: UInt64
    private let inode: UInt64

    /// The file at `path` as it is now; nil if it cannot be examined.
    init?(path: String) {
        guard let identity = Self.identity(of: path) else { return nil }
        self.path = path
        (device, inode) = identity
    }

    /// Removes the file and its lock file if `path` still names the file this was made for.
    func removeIfUnchanged() {
        guard let identity = Self.identity(of: path), identity == (device, inode) else { return }
        for file in [path, path + "-lock"] { unlink(file) }
    }

    private static func identity(of path: String) -> (UInt64, UInt64)? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return (UInt64(status.st_dev), UInt64(status.st_ino))
    }
}
