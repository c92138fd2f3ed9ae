import Foundation
import Trellis

/// The sync session of a synced Realm file: Realm's `SyncSession`.
public final class SyncSession: @unchecked Sendable {
    // @unchecked Sendable: it only reads the engine's locked state.
    unowned let engine: SyncEngine

    init(engine: SyncEngine) { self.engine = engine }

    /// Realm's session states: `.active` while it syncs (or tries to connect), `.inactive`
    /// when suspended, stopped by a fatal error, or its user logged out.
    public enum State: Sendable { case active, dying, inactive }

    /// Whether the WebSocket to the server is open.
    public enum ConnectionState: Sendable { case disconnected, connecting, connected }

    /// Which transfers ``wait(for:)`` and progress notifications are about.
    public enum ProgressDirection: Sendable { case upload, download }

    /// Whether a progress notification stops after the work outstanding when it was added.
    public enum ProgressMode: Sendable { case reportIndefinitely, forCurrentlyOutstandingWork }

    /// Progress of uploads or downloads, counted in objects (Realm counts bytes).
    public struct Progress: Sendable {
        public let transferredBytes: Int
        public let transferrableBytes: Int
        init(transferred: Int, transferrable: Int) {
            transferredBytes = transferred
            transferrableBytes = max(transferrable, transferred)
        }
        public var isTransferComplete: Bool { transferredBytes >= transferrableBytes }
        public var progressEstimate: Double {
            transferrableBytes == 0 ? 1 : Double(transferredBytes) / Double(transferrableBytes)
        }
        /// The share transferred so far: Realm's older name for ``progressEstimate``.
        @available(*, deprecated, message: "Use progressEstimate", renamed: "progressEstimate")
        public var fractionTransferred: Double { progressEstimate }
    }

    public var state: State {
        engine.state.withLock { $0.stopped || $0.suspended || $0.fatalError != nil ? .inactive : .active }
    }

    public var connectionState: ConnectionState { engine.state.withLock { $0.connection } }

    /// The user the session belongs to.
    public var parentUser: User? { engine.user }

    /// Disconnects and stays disconnected; local writes keep being queued.
    public func suspend() { engine.setSuspended(true) }

    /// Reconnects after ``suspend()``.
    public func resume() { engine.setSuspended(false) }

    /// Drops the connection and opens a new one.
    public func reconnect() { engine.post(.disconnect) }

    /// Waits until every local change committed before the call is uploaded and acknowledged
    /// (`.upload`), or until every change the server had when the call was made is applied
    /// locally (`.download`).
    ///
    /// - Throws: ``SyncError`` when the session stops with a fatal error.
    public func wait(for direction: ProgressDirection) async throws {
        switch direction {
        case .upload: try await engine.waitForUpload()
        case .download: try await engine.waitForDownload()
        }
    }

    /// Calls `block` with the progress of uploads or downloads.
    public func addProgressNotification(for direction: ProgressDirection, mode: ProgressMode = .reportIndefinitely,
                                        block: @escaping @Sendable (Progress) -> Void) -> ProgressNotificationToken? {
        let id = UUID()
        engine.state.withLock { $0.progress[id] = (direction, block) }
        return ProgressNotificationToken { [weak engine] in _ = engine?.state.withLock { $0.progress.removeValue(forKey: id) } }
    }
}

/// Keeps a progress notification alive until invalidated.
public final class ProgressNotificationToken: Sendable {
    private let cancel: @Sendable () -> Void
    init(_ cancel: @escaping @Sendable () -> Void) { self.cancel = cancel }
    public func invalidate() { cancel() }
}

/// The sync settings of a Realm configuration.
public struct SyncConfiguration: Sendable {
    /// The user the file syncs for.
    public let user: User
    /// Flexible sync (the only kind Trellis serves).
    public var enableFlexibleSync: Bool { true }
    /// What a client reset does with unsynced changes.
    public let clientResetMode: ClientResetMode
}

extension Realm.Configuration {
    /// The sync settings, or nil for a local Realm.
    public var syncConfiguration: SyncConfiguration? {
        (syncHook as? SyncEngineHandle).map { SyncConfiguration(user: $0.user, clientResetMode: $0.clientResetMode) }
    }
}

extension Realm {
    /// The sync session of this Realm's file, or nil for a local Realm.
    public var syncSession: SyncSession? { syncEngine?.session }

    /// The flexible-sync subscriptions of this Realm's file.
    public var subscriptions: SyncSubscriptionSet {
        guard let engine = syncEngine else {
            preconditionFailure("This Realm was not configured with flexible sync")
        }
        return SyncSubscriptionSet(engine: engine)
    }

    var syncEngine: SyncEngine? {
        (configuration.syncHook as? SyncEngineHandle)?.engine(configuration)
    }
}
