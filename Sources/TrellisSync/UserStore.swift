import Foundation

/// The users of an app as kept on disk, as Realm's `App` keeps them in its metadata: after a
/// relaunch `app.currentUser` is the user logged in before, with its tokens, so a synced Realm
/// opens (and takes local writes) without the network. One JSON file per app id, readable by
/// the owner only: `<rootDirectory>/trellis-sync/<app id>/users.json`.
struct UserStore: Sendable {
    /// One stored user, most recently logged in last.
    struct Record: Codable, Sendable, Equatable {
        var id: String
        /// The login provider's path name (`anon-user`, `custom-token`).
        var provider: String
        var accessToken: String?
        var refreshToken: String?
        var isLoggedIn: Bool
    }

    let file: URL

    init(folder: URL) {
        file = folder.appendingPathComponent("users.json")
    }

    /// The stored users; none when the file is missing or unreadable (a damaged file is not
    /// fatal: the users log in again).
    func load() -> [Record] {
        guard let data = FileManager.default.contents(atPath: file.path) else { return [] }
        return (try? JSONDecoder().decode([Record].self, from: data)) ?? []
    }

    /// Replaces the stored users (written to a temporary file, then renamed over the old one).
    func save(_ records: [Record]) throws {
        let folder = file.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let temporary = folder.appendingPathComponent("users.json.\(UUID().uuidString).tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: try encoder.encode(records),
                                             attributes: [.posixPermissions: 0o600]) else {
            throw AppError(code: .unknown, message: "Could not write the users file \(temporary.path): check that "
                + "the folder is writable (AppConfiguration.rootDirectory).", httpStatusCode: nil)
        }
        if rename(temporary.path, file.path) != 0 {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw AppError(code: .unknown, message: "Could not replace the users file \(file.path): \(reason).",
                           httpStatusCode: nil)
        }
    }
}
