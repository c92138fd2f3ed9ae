import Foundation

/// Making a new file (docs/STORAGE.md, section 5, "Creating a file"), so that no other thread
/// or process ever opens one half made.
///
/// A missing file is written whole (header, first commit's meta slot, the other slot zeroed,
/// synced) under a name of its own beside it, then given its name with a hard link, which
/// never replaces a file: the path holds nothing, or a whole file. Of several creators at once
/// one link wins; the others open its file. On a file system without hard links, and for an
/// empty file already there, the file is made in place under the writer lock, and an open that
/// finds a file shorter than its header waits for that lock before judging it (`open`).
extension StorageEnvironment {
    /// Bytes of the smallest whole file: the header and the two meta slots (plain pages; an
    /// encrypted file's are longer, checked once its header is read).
    static let headerBytes = UInt64(Layout.firstDataPage) * UInt64(Layout.pageSize)

    /// Makes the file at `path` if there is none, whole, under a name of its own first.
    static func createIfMissing(path: String, options: Options) throws {
        removeAbandonedCreations(of: path)
        if Platform.exists(path: path) { return }
        let suffix = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        let temporary = path + ".creating-\(Platform.processID)-\(suffix)"
        do {
            let file = try PosixFile(path: temporary, create: true)
            defer {
                file.close()
                // The path keeps the file when the link was made; otherwise it goes.
                Platform.remove(path: temporary)
            }
            try writeNewFile(Pager(file: file), key: options.encryptionKey, cachedPages: options.decryptedPageCacheSize)
            switch try Platform.link(temporary, to: path) {
            case .linked: try Platform.syncFolder(of: path)
            // Another thread or process made it first: that file is opened.
            case .destinationExists: return
            // No hard links here: the open makes it in place, under the writer lock.
            case .unsupported: return
            }
        } catch let error as StorageError {
            // Name the file asked for, not the temporary one.
            guard case .io(let operation, let number) = error.code else { throw error }
            throw StorageError.io(operation, path: path, errno: number)
        }
    }

    /// How old a creation's temporary file must be before it counts as abandoned, once its
    /// process is gone. A creation takes milliseconds; the wait keeps a creator whose process id
    /// this process cannot see (another pid namespace sharing the folder) from losing its file.
    static let abandonedCreationAge: Double = 60

    /// Removes the temporary files (`<name>.creating-<pid>-<random>`) that creators of `path`
    /// killed before their link step left behind: those whose process is gone and that are older
    /// than ``abandonedCreationAge``. Best effort: a folder that cannot be read is left as it is.
    static func removeAbandonedCreations(of path: String) {
        let (folder, name) = Platform.folderAndName(of: path)
        let prefix = name + ".creating-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasPrefix(prefix) {
            guard let pid = name.dropFirst(prefix.count).split(separator: "-").first.flatMap({ Int32($0) }),
                  pid != Platform.processID, !Platform.processIsAlive(pid) else { continue }
            let candidate = folder + "/" + name
            let modified = (try? FileManager.default.attributesOfItem(atPath: candidate))?[.modificationDate] as? Date
            guard let modified, Date().timeIntervalSince(modified) > abandonedCreationAge else { continue }
            Platform.remove(path: candidate)
        }
    }

    /// Writes a new file's header and first commit (an empty catalog) through `pager`, encrypted
    /// with `key` when given, and syncs it.
    static func writeNewFile(_ pager: Pager, key: [UInt8]?, cachedPages: Int) throws {
        let cipher = try key.map { try PageCipher.forNewFile(key: $0) }
        if let cipher { pager.encrypt(with: cipher, cachedPages: cachedPages) }
        var header = [UInt8](repeating: 0, count: pager.stride)
        header.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            FileHeader.encode(into: base, cipher: cipher)
        }
        var slot = [UInt8](repeating: 0, count: Layout.pageSize)
        slot.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            MetaSlot(txnID: 1, durableTxnID: 0, pageCount: Layout.firstDataPage, catalog: nil, freeList: nil,
                     freeListCount: 0, catalogDepth: 0, freeTreeDepth: 0, spares: []).encode(into: base)
        }
        try header.withUnsafeBytes { try pager.file.write($0, at: 0) }
        try slot.withUnsafeBytes { try pager.writePages($0, at: Layout.metaPages[0]) }
        try pager.zeroPage(Layout.metaPages[1])
        try pager.file.sync()
    }
}
