import Dispatch

/// Where a Realm (and its objects and collections) may be used.
///
/// A Realm is confined to the thread that opened it, to a serial dispatch queue, or to an
/// actor; a frozen Realm is an immutable snapshot that any thread may read.
enum Confinement {
    case thread
    case queue(DispatchQueue)
    case actor(any Actor)
    case frozen

    var isFrozen: Bool {
        if case .frozen = self { return true }
        return false
    }

    var isActor: Bool {
        if case .actor = self { return true }
        return false
    }
}

extension DispatchQueue {
    private static let identityKey = DispatchSpecificKey<UInt>()

    /// A number naming this queue, set on it the first time it is asked for, so code can tell
    /// whether it runs on the queue (``isCurrent``).
    var trellisIdentity: UInt {
        let identity = UInt(bitPattern: ObjectIdentifier(self).hashValue)
        if getSpecific(key: Self.identityKey) != identity { setSpecific(key: Self.identityKey, value: identity) }
        return identity
    }

    /// Whether the calling code runs on this queue (or on a queue targeting it).
    var isCurrent: Bool {
        let identity = trellisIdentity  // sets the queue's mark first, if it had none
        return DispatchQueue.getSpecific(key: Self.identityKey) == identity
    }
}
