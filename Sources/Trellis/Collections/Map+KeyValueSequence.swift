extension Map {
    /// An adaptor for a `Map` that is a sequence of `(key: Key, value: Value)` tuples instead of
    /// ``SingleMapEntry`` values, as Realm's `Map.KeyValueSequence`.
    public struct KeyValueSequence<K: _MapKey, V: RealmCollectionValue>: Sequence {
        private let map: Map<K, V>

        fileprivate init(_ map: Map<K, V>) { self.map = map }

        /// Iterates over a snapshot of the map's entries taken when iteration begins.
        public func makeIterator() -> RLMKeyValueIterator<K, V> {
            RLMKeyValueIterator(entries: map.entries)
        }
    }

    /// The map as a sequence of `(key: Key, value: Value)`:
    /// `for (key, value) in map.asKeyValueSequence() { … }`.
    public func asKeyValueSequence() -> KeyValueSequence<Key, Value> {
        KeyValueSequence(self)
    }
}

/// The iterator of ``Map/KeyValueSequence``: the entries of a map as `(key: Key, value: Value)`.
public struct RLMKeyValueIterator<Key: _MapKey, Value: RealmCollectionValue>: IteratorProtocol {
    private var base: IndexingIterator<[SingleMapEntry<Key, Value>]>

    init(entries: [SingleMapEntry<Key, Value>]) { base = entries.makeIterator() }

    /// The next entry, or nil after the last.
    public mutating func next() -> (key: Key, value: Value)? {
        base.next().map { (key: $0.key, value: $0.value) }
    }
}
