import Foundation
import Synchronization
import Trellis

/// Called with a sync error and the session it happened in: Realm's `ErrorReportingBlock`.
public typealias ErrorReportingBlock = @Sendable (Error, SyncSession?) -> Void

/// What a synced file does when the server's history it synced with is gone (the database was
/// dropped and recreated, restored from a backup, or its history pruned past the file): Realm's
/// `ClientResetMode` (docs/SYNC.md, "Client reset"). The file then downloads the server's
/// state again; the mode decides what happens to the changes it had not uploaded yet.
///
/// ```swift
/// var config = user.flexibleSyncConfiguration(clientResetMode: .discardUnsyncedChanges(afterReset: { before, after in
///     print("lost \(before.objects(Dog.self).count - after.objects(Dog.self).count) dogs")
/// }))
/// ```
///
/// `beforeReset` gets a frozen Realm of the file before the reset; `afterReset` that frozen
/// Realm and the live Realm after it (on the session's queue: read what you need there).
public enum ClientResetMode: Sendable {
    /// The file becomes the server's state; changes not uploaded are lost (read them from
    /// `before` in `afterReset` to redo what matters).
    case discardUnsyncedChanges(beforeReset: (@Sendable (_ before: Realm) -> Void)? = nil,
                                afterReset: (@Sendable (_ before: Realm, _ after: Realm) -> Void)? = nil)
    /// The file becomes the server's state, then the changes not uploaded are applied again on
    /// it and uploaded, by Realm's recovery rules: objects created locally are created; an
    /// object the server no longer has loses the local updates (the delete wins); a local
    /// delete is applied; a field changed locally takes the local value. When recovery fails
    /// the reset falls back to ``manual(errorHandler:)``. The default.
    case recoverUnsyncedChanges(beforeReset: (@Sendable (_ before: Realm) -> Void)? = nil,
                                afterReset: (@Sendable (_ before: Realm, _ after: Realm) -> Void)? = nil)
    /// ``recoverUnsyncedChanges(beforeReset:afterReset:)``, falling back to
    /// ``discardUnsyncedChanges(beforeReset:afterReset:)`` when recovery fails.
    case recoverOrDiscardUnsyncedChanges(beforeReset: (@Sendable (_ before: Realm) -> Void)? = nil,
                                         afterReset: (@Sendable (_ before: Realm, _ after: Realm) -> Void)? = nil)
    /// Nothing automatic: the session stops with a `SyncError` of code `.clientResetError`,
    /// given to `errorHandler` (or, without one, to `app.syncManager.errorHandler`). Its
    /// ``SyncError/clientResetInfo()`` holds where the file will be backed up and the token
    /// for ``SyncSession/immediatelyHandleError(_:syncManager:)``, which backs the file up
    /// there, resets it to the server's state and syncs again.
    case manual(errorHandler: ErrorReportingBlock? = nil)

    var beforeReset: (@Sendable (Realm) -> Void)? {
        switch self {
        case .discardUnsyncedChanges(let before, _), .recoverUnsyncedChanges(let before, _),
             .recoverOrDiscardUnsyncedChanges(let before, _): before
        case .manual: nil
        }
    }

    var afterReset: (@Sendable (Realm, Realm) -> Void)? {
        switch self {
        case .discardUnsyncedChanges(_, let after), .recoverUnsyncedChanges(_, let after),
             .recoverOrDiscardUnsyncedChanges(_, let after): after
        case .manual: nil
        }
    }
}

extension SyncError {
    /// An opaque token for ``SyncSession/immediatelyHandleError(_:syncManager:)``: Realm's
    /// `SyncError.ActionToken`.
    public final class ActionToken: Sendable {
        let backupPath: String
        private let action: Mutex<(@Sendable () throws -> Void)?>

        init(backupPath: String, action: @escaping @Sendable () throws -> Void) {
            self.backupPath = backupPath
            self.action = Mutex(action)
        }

        /// Runs the action once (later calls do nothing).
        func run() throws {
            let action = self.action.withLock { action in
                defer { action = nil }
                return action
            }
            try action?()
        }
    }

    /// With a `.clientResetError`: where the file is backed up when the reset is carried out,
    /// and the token that carries it out now. Realm's `clientResetInfo()`.
    public func clientResetInfo() -> (String, ActionToken)? {
        guard code == .clientResetError, let actionToken else { return nil }
        return (actionToken.backupPath, actionToken)
    }
}

extension SyncSession {
    /// Carries out what an error's token stands for: for a client reset, backs the file up to
    /// the path of ``SyncError/clientResetInfo()``, replaces its content with the server's
    /// state (unsynced changes are discarded: they stay in the backup) and starts syncing
    /// again. Close the file's Realms first where you can; Realms still open see the reset as
    /// an ordinary change. Realm's `immediatelyHandleError(_:syncManager:)`.
    public static func immediatelyHandleError(_ token: SyncError.ActionToken, syncManager: SyncManager) {
        do {
            try token.run()
        } catch {
            syncManager.errorHandler?(SyncError(code: .clientResetError, message: "The client reset could not back up "
                + "the file to \(token.backupPath): \(error). Free space or fix the folder's permissions and call "
                + "immediatelyHandleError again after reopening the Realm.", isFatal: true), nil)
        }
    }
}
