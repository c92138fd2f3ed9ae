import Foundation

/// `TrellisProcessHelper as-user NAME COMMAND PATH …` runs COMMAND as the user NAME (`nobody`):
/// the helper, started by root, gives up its groups, group and user before it opens anything.
/// File modes do not stop root, so this is how a test makes a folder the opener cannot write
/// (ReadOnlyFolderTests).
enum UnprivilegedUser {
    /// The arguments with `as-user NAME` taken out, after switching to NAME; the arguments
    /// unchanged when they do not start with `as-user`. Exits with status 2 when the switch fails.
    static func dropIfAsked(_ arguments: [String]) -> [String] {
        guard arguments.count >= 3, arguments[1] == "as-user" else { return arguments }
        let name = arguments[2]
        guard let entry = getpwnam(name) else { fail("there is no user '\(name)'") }
        let user = entry.pointee.pw_uid
        let group = entry.pointee.pw_gid
        // Groups first, then the group, then the user: after setuid the others are not allowed.
        guard setgroups(0, nil) == 0 else { fail("setgroups: \(String(cString: strerror(errno)))") }
        guard setgid(group) == 0 else { fail("setgid(\(group)): \(String(cString: strerror(errno)))") }
        guard setuid(user) == 0 else { fail("setuid(\(user)): \(String(cString: strerror(errno)))") }
        // Root could take it back if this were only the effective user.
        guard setuid(0) != 0 else { fail("still able to become root after setuid(\(user))") }
        return [arguments[0]] + arguments[3...]
    }

    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("as-user: \(message)\n".utf8))
        exit(2)
    }
}
