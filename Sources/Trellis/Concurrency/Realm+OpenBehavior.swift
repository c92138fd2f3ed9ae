import Foundation

extension Realm {
    /// When opening a synced Realm waits for the server's data first, as in Realm. A Realm
    /// that is not synced opens at once whatever this says.
    @frozen public enum OpenBehavior: Sendable {
        /// Open at once, as the synchronous initializer does; a synced Realm downloads in the
        /// background (a first open shows an empty file until it has).
        case never
        /// Download everything the subscriptions select before returning (fails offline).
        case always
        /// Download first only when the file does not exist yet (the first launch on a device),
        /// then open at once on later launches, offline included.
        case once

        func downloads(_ configuration: Realm.Configuration) -> Bool {
            guard configuration.syncHook != nil else { return false }
            switch self {
            case .never: return false
            case .always: return true
            case .once: return !FileManager.default.fileExists(atPath: configuration.path)
            }
        }
    }

    /// Opens a Realm confined to the main actor (usable in any code isolated to it, whichever
    /// thread runs it), first waiting, as
    /// `downloadBeforeOpen` says, for a synced Realm's data to be downloaded.
    ///
    /// Unlike Realm, `downloadBeforeOpen` has no default here: with one, `try Realm()` in any
    /// async function would pick this initializer and need `await`; Realm code that writes
    /// `try await Realm()` compiles either way (it uses the synchronous initializer).
    ///
    /// - Throws: what opening throws (``Realm/Error``), or the sync error that stopped the download.
    @MainActor
    public init(configuration: Configuration = .defaultConfiguration, downloadBeforeOpen: OpenBehavior) async throws {
        let download = downloadBeforeOpen.downloads(configuration)
        self.init(opened: try RealmOpener.open(configuration, confinement: .actor(MainActor.shared)))
        configuration.syncHook?.realmDidOpen(configuration)
        if download { try await Self.downloadFromServer(configuration) }
    }

    /// Waits until the sync hook reports that everything the subscriptions select is downloaded.
    static func downloadFromServer(_ configuration: Realm.Configuration) async throws {
        guard let hook = configuration.syncHook else { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Swift.Error>) in
            hook.downloadBeforeOpen(configuration) { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
    }
}
