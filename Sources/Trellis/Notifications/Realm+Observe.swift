extension Realm {
    /// What a Realm notification reports.
    public enum Notification: String, Sendable {
        /// The Realm moved to a newer version (a commit here, or a refresh that found one).
        case didChange = "RLMRealmDidChangeNotification"
        /// Another Realm committed a newer version and this one, with ``Realm/autorefresh``
        /// off, stays where it is until `refresh()` (on the main thread, a queue or an actor,
        /// as `.didChange` from other threads).
        case refreshRequired = "RLMRealmRefreshRequiredNotification"
    }

    /// The block ``observe(_:)`` calls.
    public typealias NotificationBlock = (_ notification: Notification, _ realm: Realm) -> Void

    /// Calls `block` with `.didChange` whenever this Realm moves to a newer version: after its
    /// own commits, after `refresh()` finds a newer one, and (on the main thread) after other
    /// threads commit; with ``autorefresh`` off, other threads' commits send `.refreshRequired`
    /// instead.
    public func observe(_ block: @escaping NotificationBlock) -> NotificationToken {
        core.verifyThread()
        if core.isFrozen { throwRealmException("Frozen Realms do not change and do not have change notifications.") }
        core.beginReadIfNeeded()
        return core.addObserver(RealmObserver(core: core, block: block))
    }
}
