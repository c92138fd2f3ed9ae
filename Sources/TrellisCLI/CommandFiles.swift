import Foundation

/// Every file and folder the commands read or write: checked before use, and any failure
/// reported as one ``CommandError`` line (what failed, where, how to fix it) instead of
/// Foundation's error dump.
///
/// Permissions are judged by the mode bits, as `Realm` does for read-only files: a process
/// running as root could read or write anyway, and should still be told.
enum CommandFiles {
    /// An existing database file the command reads (`inspect`, `query`, `export`, `schema export`).
    static func databaseToRead(_ path: String) throws -> URL {
        let url = absolute(path)
        try checkExisting(url, isFolder: false, failure: "cannot open the database",
                          ifMissing: "Check the path (`trellis demo` writes sample databases to try).")
        return url
    }

    /// An existing database file the command writes into (`import`), by its stored schema.
    static func databaseToWrite(_ path: String) throws -> URL {
        let url = absolute(path)
        let failure = "cannot import into"
        try checkExisting(url, isFolder: false, failure: failure,
                          ifMissing: "Import needs an existing Trellis file, whose stored schema says how to store "
                              + "the documents: create it with your app's models first.")
        if let mode = mode(of: url), mode & 0o222 == 0 {
            throw CommandError(message: "\(failure) '\(url.path)': the file is read-only (mode "
                + "\(octal(mode))). Make it writable (chmod u+w), or import into a copy.")
        }
        return url
    }

    /// An existing folder the command reads files from (`import`, `schema codegen`).
    static func folderToRead(_ path: String, holding contents: String) throws -> URL {
        let url = absolute(path)
        try checkExisting(url, isFolder: true, failure: "cannot read \(contents) from",
                          ifMissing: "Give the folder that holds \(contents).")
        return url
    }

    /// The names in a folder, sorted.
    static func contents(of folder: URL) throws -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        } catch {
            throw failure("cannot list the folder", folder, error, forWriting: false)
        }
    }

    /// The bytes of a file.
    static func read(_ url: URL) throws -> Data {
        try checkExisting(url, isFolder: false, failure: "cannot read", ifMissing: "Check the path.")
        do {
            return try Data(contentsOf: url)
        } catch {
            throw failure("cannot read", url, error, forWriting: false)
        }
    }

    /// The folder an option names for the command's output, created (with its parents) if
    /// missing; it must be writable.
    static func outputFolder(_ path: String, option: String) throws -> URL {
        let url = absolute(path)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw CommandError(message: "cannot write into the \(option) folder '\(url.path)': it is a file, not a "
                    + "folder. Choose a folder (it is created if missing), or move the file away.")
            }
            if let mode = mode(of: url), mode & 0o222 == 0 {
                throw CommandError(message: "cannot write into the \(option) folder '\(url.path)': it is read-only "
                    + "(mode \(octal(mode))). Make it writable (chmod u+w), or choose another folder.")
            }
            return url
        }
        // Foundation reports a file in the way as a bare "error 512": find it first.
        var ancestor = url.deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: ancestor.path, isDirectory: &isDirectory), ancestor.path != "/" {
            ancestor = ancestor.deletingLastPathComponent()
        }
        if !isDirectory.boolValue {
            throw CommandError(message: "cannot create the \(option) folder '\(url.path)': '\(ancestor.path)' is a file, "
                + "not a folder. Choose another path, or move the file away.")
        }
        if let mode = mode(of: ancestor), mode & 0o222 == 0 {
            throw CommandError(message: "cannot create the \(option) folder '\(url.path)': '\(ancestor.path)' is "
                + "read-only (mode \(octal(mode))). Choose a folder you can write to.")
        }
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw failure("cannot create the \(option) folder", url, error, forWriting: true)
        }
        return url
    }

    /// Writes a file (replacing one that is there).
    static func write(_ data: Data, to url: URL) throws {
        try checkCanWrite(url)
        do {
            try data.write(to: url)
        } catch {
            throw failure("cannot write", url, error, forWriting: true)
        }
    }

    /// Throws if a file (or, `asFolder`, a folder to write into) cannot be written at `url` for
    /// a reason known before trying (a folder, a file or a read-only file in the way): commands check every output first, so that such a
    /// problem leaves no partial output.
    static func checkCanWrite(_ url: URL, asFolder: Bool = false) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else { return }
        if asFolder, !isDirectory.boolValue {
            throw CommandError(message: "cannot write into '\(url.path)': a file is in the way. Move it away, or "
                + "choose another folder.")
        }
        if isDirectory.boolValue, !asFolder {
            throw CommandError(message: "cannot write '\(url.path)': a folder is in the way. Move it away, or "
                + "choose another folder.")
        }
        if let mode = mode(of: url), mode & 0o222 == 0 {
            throw CommandError(message: "cannot write '\(url.path)': it is read-only (mode "
                + "\(octal(mode))). Make it writable (chmod u+w), or choose another folder.")
        }
    }

    // MARK: - Checks

    private static func absolute(_ path: String) -> URL {
        URL(fileURLWithPath: path).standardizedFileURL
    }

    /// `644`, `555`, `000`: permission bits as `ls` and `chmod` spell them.
    private static func octal(_ mode: Int) -> String {
        let digits = String(mode & 0o777, radix: 8)
        return String(repeating: "0", count: max(0, 3 - digits.count)) + digits
    }

    private static func mode(of url: URL) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: url.path))?[.posixPermissions] as? Int
    }

    /// Throws unless `url` exists, is a folder or a file as asked, and is readable.
    private static func checkExisting(_ url: URL, isFolder: Bool, failure: String, ifMissing: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw CommandError(message: "\(failure) '\(url.path)': no such \(isFolder ? "folder" : "file"). \(ifMissing)")
        }
        if isDirectory.boolValue, !isFolder {
            throw CommandError(message: "\(failure) '\(url.path)': it is a folder, not a file. Give the path of a file.")
        }
        if !isDirectory.boolValue, isFolder {
            throw CommandError(message: "\(failure) '\(url.path)': it is a file, not a folder. Give the path of a folder.")
        }
        if let mode = mode(of: url), mode & 0o444 == 0 || !FileManager.default.isReadableFile(atPath: url.path) {
            throw CommandError(message: "\(failure) '\(url.path)': permission denied (mode \(octal(mode))). "
                + "Make it readable (chmod u+r).")
        }
    }

    private static func failure(_ what: String, _ url: URL, _ error: any Error, forWriting: Bool) -> CommandError {
        let problem = FileProblem(error)
        return CommandError(message: "\(what) '\(url.path)': \(problem.reason). \(problem.advice(forWriting: forWriting))")
    }
}
