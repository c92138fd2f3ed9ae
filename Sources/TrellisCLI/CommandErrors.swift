import ArgumentParser
import Foundation
import Trellis

/// Runs a command's body; every failure becomes one line on standard error,
/// `trellis: error: <what failed> '<where>': <why>. <how to fix>`, and a non-zero exit code:
/// 2 for a bad predicate, 1 for everything else.
func reportingErrors(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as Realm.Error where error.code == .invalidQuery {
        // The first line says what is wrong and where; the rest only draws the position.
        fail(String(error.message.split(separator: "\n").first ?? ""), exitCode: 2)
    } catch let error as Realm.Error {
        fail(error.message)
    } catch let error as CommandError {
        fail(error.message)
    } catch let error as KeyFileError {
        fail(error.message)
    } catch let error as ExitCode {
        throw error
    } catch {
        // Every file access of the commands goes through `CommandFiles`, which says what it
        // was doing; this is the last resort for a failure nobody anticipated.
        fail("the command failed: \(FileProblem(error).reason). Run it again; if it fails again, report it.")
    }
}

/// One line on standard error, then exit: 1 for a file problem, 2 for a bad predicate.
private func fail(_ message: String, exitCode: Int32 = 1) -> Never {
    let line = message.split(whereSeparator: \.isNewline).joined(separator: " ")
    FileHandle.standardError.write(Data("trellis: error: \(line)\n".utf8))
    exit(exitCode)
}

/// A problem of the command itself (a missing input file, an output folder that cannot be
/// made), reported like a Trellis error: what failed, where, how to fix it.
struct CommandError: Error {
    let message: String
}

/// Why a file-system operation failed, in words, from the POSIX error underneath Foundation's.
struct FileProblem {
    /// The operating system's error number, when Foundation kept it.
    let code: Int32?
    /// A few words: "no such file or folder", "permission denied".
    let reason: String

    init(_ error: any Error) {
        code = Self.posixCode(error)
        switch code {
        case ENOENT: reason = "no such file or folder"
        case ENOTDIR: reason = "a part of the path is a file, not a folder"
        case EACCES, EPERM: reason = "permission denied"
        case EROFS: reason = "the file system is read-only"
        case ENOSPC, EDQUOT: reason = "the disk is full"
        case EISDIR: reason = "it is a folder, not a file"
        case EEXIST: reason = "a file is in the way"
        case ENAMETOOLONG: reason = "the path is too long"
        case EIO: reason = "an I/O error (the disk may be failing)"
        default:
            let nsError = error as NSError
            // Foundation's text for codes it has no words for is "The operation could not be
            // completed. (NSCocoaErrorDomain error 512.)": say what is known instead.
            reason = nsError.domain == NSCocoaErrorDomain
                ? "the file system refused (Foundation error \(nsError.code))"
                : nsError.localizedDescription.trimmingCharacters(in: CharacterSet(charactersIn: ". "))
        }
    }

    /// How to get past this problem when writing (`forWriting`) or reading.
    func advice(forWriting: Bool) -> String {
        switch code {
        case ENOENT: forWriting ? "Choose a folder that exists or can be created." : "Check the path."
        case ENOTDIR, ENAMETOOLONG: "Check the path."
        case EACCES, EPERM, EROFS:
            forWriting ? "Choose a folder you can write to." : "Check the permissions of the file and its folders."
        case ENOSPC, EDQUOT: "Free space on the disk and try again."
        case EISDIR: "Give the path of a file."
        case EEXIST: "Remove it, or choose another path."
        default: "Check the path and try again."
        }
    }

    /// The POSIX error of a Foundation error (or of the error under it).
    private static func posixCode(_ error: any Error) -> Int32? {
        var current: NSError? = error as NSError
        while let nsError = current {
            if nsError.domain == NSPOSIXErrorDomain { return Int32(truncatingIfNeeded: nsError.code) }
            current = nsError.userInfo[NSUnderlyingErrorKey] as? NSError
        }
        let nsError = error as NSError
        guard nsError.domain == NSCocoaErrorDomain else { return nil }
        switch CocoaError.Code(rawValue: nsError.code) {
        case .fileNoSuchFile, .fileReadNoSuchFile: return ENOENT
        case .fileWriteNoPermission, .fileReadNoPermission: return EACCES
        case .fileWriteVolumeReadOnly: return EROFS
        case .fileWriteOutOfSpace: return ENOSPC
        case .fileWriteFileExists: return EEXIST
        default: return nil
        }
    }
}
