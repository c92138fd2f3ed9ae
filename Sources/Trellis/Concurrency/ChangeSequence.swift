import Dispatch

/// An asynchronous sequence of changes (``Results/changes``, ``ObjectBase`` `changes`): the
/// first element is the initial state, then one per commit that changed the observed value.
///
/// Each element carries *frozen* values, so it can be read on whatever thread the consuming
/// task runs on. Cancelling the task (or dropping the iterator) stops the observation.
public struct RealmChanges<Element>: AsyncSequence {
    public typealias Failure = Never
    // @unchecked Sendable: elements hold frozen values only, readable from any thread.
    struct Box: @unchecked Sendable { let element: Element }

    private let start: (AsyncStream<Box>.Continuation) -> NotificationToken

    init(_ start: @escaping (AsyncStream<Box>.Continuation) -> NotificationToken) { self.start = start }

    public func makeAsyncIterator() -> Iterator {
        let (stream, continuation) = AsyncStream<Box>.makeStream(bufferingPolicy: .unbounded)
        let token = start(continuation)
        continuation.onTermination = { _ in token.invalidate() }
        return Iterator(inner: stream.makeAsyncIterator(), token: token)
    }

    /// Iterates the changes; the observation ends with the iterator.
    public struct Iterator: AsyncIteratorProtocol {
        var inner: AsyncStream<Box>.Iterator
        let token: NotificationToken

        public mutating func next() async -> Element? {
            await inner.next()?.element
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            await inner.next(isolation: actor)?.element
        }
    }
}

/// The queue changes are computed on before they are frozen and handed to the sequence.
private let changesQueue = DispatchQueue(label: "trellis.changes")

extension Results {
    /// The results' changes as an asynchronous sequence of frozen snapshots:
    /// `for await change in dogs.changes { … }`.
    public var changes: RealmChanges<RealmCollectionChange<Results>> { changes(keyPaths: nil) }

    /// ``changes``, counting only changes to `keyPaths` as modifications.
    public func changes(keyPaths: [String]?) -> RealmChanges<RealmCollectionChange<Results>> {
        core.verifyCanObserve()
        return RealmChanges { continuation in
            self.observe(keyPaths: keyPaths, on: changesQueue) { change in
                let frozen: RealmCollectionChange<Results>
                switch change {
                case .initial(let results): frozen = .initial(results.freeze())
                case .update(let results, let deletions, let insertions, let modifications):
                    frozen = .update(results.freeze(), deletions: deletions, insertions: insertions,
                                     modifications: modifications)
                case .error(let error): frozen = .error(error)
                }
                continuation.yield(.init(element: frozen))
            }
        }
    }
}

extension _ObjectObservable {
    /// The object's changes as an asynchronous sequence; each `.change` carries the object
    /// frozen at the new version. The sequence ends after `.deleted`.
    public var changes: RealmChanges<ObjectChange<Self>> { changes(keyPaths: nil) }

    /// A property value fit for another thread: a linked object frozen at the same version
    /// (nil if it no longer exists there), any other value as it is.
    private static func frozenValue(_ value: Any?) -> Any? {
        guard let object = value as? ObjectBase, let managed = object._managed else { return value }
        return managed.core.frozenCore().linkedAccessor(Swift.type(of: object), key: managed.key)
    }

    /// ``changes``, limited to `keyPaths`.
    public func changes(keyPaths: [String]?) -> RealmChanges<ObjectChange<Self>> {
        RealmChanges { continuation in
            self.observe(keyPaths: keyPaths, on: changesQueue) { change in
                switch change {
                case .change(let object, let properties):
                    let frozen = properties.map {
                        PropertyChange(name: $0.name, oldValue: Self.frozenValue($0.oldValue),
                                       newValue: Self.frozenValue($0.newValue))
                    }
                    continuation.yield(.init(element: .change(object.freeze(), frozen)))
                case .deleted:
                    continuation.yield(.init(element: .deleted))
                    continuation.finish()
                case .error(let error):
                    continuation.yield(.init(element: .error(error)))
                }
            }
        }
    }
}
