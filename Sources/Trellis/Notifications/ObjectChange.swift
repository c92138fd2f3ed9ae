/// What happened to an observed object (see `Object.observe`).
@frozen
public enum ObjectChange<T> {
    /// Never delivered by Trellis; kept for source compatibility with Realm.
    case error(any Error)
    /// Some properties changed; `T` is the object, read from the new version.
    case change(T, [PropertyChange])
    /// The object was deleted. No further notifications are delivered.
    case deleted
}

/// One changed property of an observed object.
@frozen
public struct PropertyChange {
    /// The property's name.
    public let name: String
    /// The value before the change; nil for collections and LinkingObjects, and (as in Realm)
    /// when the change is a commit of the observing Realm itself (a write on the same thread,
    /// queue or actor): only changes that arrive from elsewhere carry their old value.
    public let oldValue: Any?
    /// The value after the change; nil for collections and LinkingObjects.
    public let newValue: Any?
}

/// What changed in an observed collection (see `Results.observe`).
///
/// `deletions` are indices in the previous version, `insertions` and `modifications` indices
/// as Realm reports them: insertions in the new version, modifications in the previous one.
/// An object that moved (a sorted result whose key changed) is a deletion and an insertion.
@frozen
public enum RealmCollectionChange<CollectionType> {
    /// The collection as it was when the observation started.
    case initial(CollectionType)
    /// The collection after a commit, with the indices that changed.
    case update(CollectionType, deletions: [Int], insertions: [Int], modifications: [Int])
    /// Never delivered by Trellis; kept for source compatibility with Realm.
    case error(any Error)
}

/// What changed in an observed `Map`, by key.
@frozen
public enum RealmMapChange<Collection: RealmKeyedCollection> {
    /// The map as it was when the observation started.
    case initial(Collection)
    /// The map after a commit: the keys removed, added, and whose values changed.
    case update(Collection, deletions: [Collection.Key], insertions: [Collection.Key],
                modifications: [Collection.Key])
    /// Never delivered by Trellis; kept for source compatibility with Realm.
    case error(any Error)
}

/// A collection keyed by strings (`Map`), for ``RealmMapChange``. As in Realm, its keys are
/// map keys and its values collection values, so generic code can reach `Value.PersistedType`
/// (`where T: RealmKeyedCollection, T.Value.PersistedType: _QueryNumeric`).
public protocol RealmKeyedCollection {
    /// The type of the keys.
    associatedtype Key: _MapKey
    /// The type of the values.
    associatedtype Value: RealmCollectionValue
}
