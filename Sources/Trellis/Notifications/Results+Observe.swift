import Dispatch

extension Results {
    /// Calls `block` with the results' initial contents, then after every commit that changed
    /// them, with the indices deleted, inserted and modified.
    ///
    /// `keyPaths` limits which property changes count as modifications (`["dog.name"]`); by
    /// default a change to any property of an object, or of an object it links to (up to four
    /// links deep), does. With `queue`, `block` runs there, with results of a Realm confined
    /// to that queue; without it, on this thread, when this Realm commits or refreshes (and on
    /// the main thread also after other threads' commits).
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<Results>) -> Void) -> NotificationToken
    {
        core.verifyCanObserve()
        return core.observing(on: queue) { target in
            // On its own Realm the block gets these results themselves (`==` to them), as in
            // Realm; elsewhere, results of the delivering Realm.
            let results = target === core ? self : Results(core: target, source: self.source, steps: self.steps)
            return CollectionObserver(core: target, collection: results,
                                      source: results.observationSource(keyPaths), block: block)
        }
    }

    /// What a ``CollectionObserver`` needs to follow these results.
    func observationSource<C>(_ keyPaths: [String]?) -> CollectionObserver<C, ObjectKey>.Source {
        if isValues { return valueObservationSource() }
        let info = objectInfo
        let paths = keyPaths.map { $0.map { ObservedKeyPath.resolve($0, from: info, core: core) } }
        let dependencies = ResultsDependencies(steps: steps, info: info)
        // The observer's own reads: never trapping for results made before an invalidate().
        return .init(elements: { self.keys(validating: false) },
                     mayChangeElements: { self.mayChangeElements($0, dependencies) },
                     isModified: { self.isModified($0, $1, paths) },
                     elementsAreUnique: elementsAreUnique)
    }

    private var elementsAreUnique: Bool {
        switch source {
        case .table, .dynamicTable: true
        case .collection(let location): location.field.typeInfo.collection == .set
        case .linkingObjects, .values, .nestedValues: false
        }
    }

    private func isModified(_ key: ObjectKey, _ checker: ChangeChecker, _ paths: [ObservedKeyPath]?) -> Bool {
        guard let table else { return false }
        return checker.isModified(table, key, paths: paths)
    }

    private func mayChangeElements(_ changes: ChangeSet, _ dependencies: ResultsDependencies) -> Bool {
        guard let table else { return false }
        let stepsMayChange = !steps.isEmpty && dependencies.mayChange(changes, table: table)
        switch source {
        case .values(let location):
            return Self.ownerChanged(changes, location.table, location.key, column: location.field.rowColumn)
        case .nestedValues(let nested):
            let owner = nested.root.ownerColumn
            return Self.ownerChanged(changes, owner.table, owner.key, column: owner.column)
        case .table, .dynamicTable:
            return dependencies.mayChange(changes, table: table)
        case .collection(let location):
            return Self.ownerChanged(changes, location.table, location.key, column: location.field.rowColumn)
                || stepsMayChange
        case .linkingObjects(let target, let key, let property):
            guard let field = table.info.field(named: property) else { return false }
            let column = ChangeSet.backlinkColumn(originTable: table.tableId, originColumn: field.rowColumn)
            return Self.ownerChanged(changes, target, key, column: column) || stepsMayChange
        }
    }

    /// Whether the owner of a collection (or the target of backlinks) was deleted, or the
    /// column changed.
    static func ownerChanged(_ changes: ChangeSet, _ table: Table, _ key: ObjectKey, column: Int) -> Bool {
        guard let owner = changes.tables[table.tableId] else { return false }
        return owner.deletions.contains(key) || owner.modifications[key]?.contains(column) == true
    }
}

extension Results where Element: ObjectBase {
    /// `observe` with typed key paths: `observe(keyPaths: [\Dog.name])`.
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<Results>) -> Void) -> NotificationToken
    {
        observe(keyPaths: keyPaths.map(QueryKeyPathNames.name), on: queue, block)
    }
}

extension Results {
    /// Results of values are followed by position: each value is identified by its index in
    /// the evaluated values (a changed value is a deletion and an insertion), and the
    /// collection's owner column tells when they may have changed.
    private func valueObservationSource<C>() -> CollectionObserver<C, ObjectKey>.Source {
        .init(elements: { self.valueIdentities() },
              mayChangeElements: { changes in
                  switch self.source {
                  case .values(let location):
                      return Self.ownerChanged(changes, location.table, location.key, column: location.field.rowColumn)
                  case .nestedValues(let nested):
                      let owner = nested.root.ownerColumn
                      return Self.ownerChanged(changes, owner.table, owner.key, column: owner.column)
                  default:
                      return false
                  }
              },
              isModified: { _, _ in false },
              elementsAreUnique: false)
    }

    /// One identity per evaluated value: a hash of the value and its occurrence, so that equal
    /// values keep their identity when others come and go.
    private func valueIdentities() -> [ObjectKey] {
        var seen = [Element: UInt64]()
        return evaluatedValues(validating: false).map { value in
            let occurrence = seen[value, default: 0]
            seen[value] = occurrence + 1
            var hasher = Hasher()
            hasher.combine(value)
            hasher.combine(occurrence)
            return ObjectKey(truncatingIfNeeded: hasher.finalize())
        }
    }
}

extension RealmCore {
    /// Registers the observer `make` builds: here, or (with `queue`) in the Realm of the same
    /// file confined to `queue`, on the queue.
    ///
    /// As Realm's: with a queue the token comes back at once and the observer registers later,
    /// in work submitted to the queue now (never waiting for the queue, which may be busy or
    /// blocked; the current queue too). The queue's Realm first moves to this Realm's version as
    /// a ``ThreadSafeReference`` resolved there would (one that is in no read transaction yet
    /// begins it at this very version), so a commit made after `observe` returned is a change
    /// the observer reports, not part of its starting state. A token invalidated before the
    /// work ran never registers.
    func observing(on queue: DispatchQueue?, _ make: @escaping (RealmCore) -> ChangeObserver) -> NotificationToken {
        guard let queue else { return addObserver(make(self)) }
        let version = ReferencePayload(resolver: _ThreadSafeResolver { _ in nil }, source: self)
        let token = NotificationToken(pending: ())
        let work = QueueRegistration(configuration: configuration, make: make)
        queue.async {
            // Nothing to do for a token invalidated meanwhile (checked again under its lock).
            guard token.isPending else { return }
            let target: RealmCore
            do {
                target = try RealmOpener.open(work.configuration, confinement: .queue(queue))
            } catch {
                throwRealmException("Could not open '\(work.configuration.path)' on the queue '\(queue.label)': \(error)")
            }
            _ = version.resolve(in: target)
            let observer = work.make(target)
            target.addObserver(observer, registeringWith: token)
        }
        return token
    }
}

/// What an observation registered on a queue hands to the queue.
// @unchecked Sendable: `make` captures descriptions of what to observe (tables, keys, query
// steps, key paths) and the block; it runs once, on the queue, after the caller let go of it.
private struct QueueRegistration: @unchecked Sendable {
    let configuration: Realm.Configuration
    let make: (RealmCore) -> ChangeObserver
}
