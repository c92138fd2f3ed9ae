import Dispatch

extension ProjectionObservable {
    /// Calls `block` after every commit that changed a projected property of the projected
    /// object (one ``PropertyChange`` per projected property, named as the projection names
    /// it, with old and new values read through its key path), and once with `.deleted` when
    /// the object is deleted. There is no initial call.
    ///
    /// `keyPaths` limits the properties observed. Each is a key path of the root class that a
    /// projected property reads (`"firstName"`, `"address.city"`, `"friends.firstName"` for a
    /// projected collection), as in Realm, or the name of a projected property (`"homeCity"`);
    /// one that is neither traps. A change to the root's other properties is not reported.
    /// Projected properties that read the same root property are all reported when it changes.
    ///
    /// With `queue`, `block` runs there, with a projection of the object in a Realm confined to
    /// that queue. Cannot be called during a write transaction (Realm's message).
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken
    {
        let (observed, origins) = observedProperties(keyPaths)
        var projection: Self? = queue == nil ? self : nil
        return rootObject.observe(keyPaths: origins, on: queue) { (change: ObjectChange<Root>) in
            switch change {
            case .deleted:
                block(.deleted)
            case .error(let error):
                block(.error(error))
            case .change(let object, let changes):
                let current = projection ?? Self(projecting: object)
                projection = current
                let projected = Self.projectedChanges(changes, of: current.rootObject, observed: observed)
                if !projected.isEmpty { block(.change(current, projected)) }
            }
        }
    }

    /// Like ``observe(keyPaths:on:_:)``, but `block` runs isolated to `actor`, with a projection
    /// of the object read from the actor's Realm.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, ObjectChange<Self>) -> Void)
        async -> NotificationToken
    {
        let (observed, origins) = observedProperties(keyPaths)
        let project = ProjectionMaker<Self>()
        return await rootObject.observe(keyPaths: origins, on: actor) { actor, change in
            switch change {
            case .deleted:
                block(actor, .deleted)
            case .error(let error):
                block(actor, .error(error))
            case .change(let object, let changes):
                let projected = project.changes(changes, of: object, observed: observed)
                if !projected.isEmpty { block(actor, .change(project.projection(of: object), projected)) }
            }
        }
    }

    /// Like ``observe(keyPaths:on:_:)`` with the projection's key paths, but `block` runs
    /// isolated to `actor`.
    public func observe<A: Actor>(keyPaths: [PartialKeyPath<Self>], on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, ObjectChange<Self>) -> Void)
        async -> NotificationToken
    {
        await observe(keyPaths: keyPaths.isEmpty ? nil : keyPaths.map(ProjectionSchema.originKeyPath(of:)), on: actor,
                      block)
    }

    /// The projected properties `keyPaths` names (all without key paths), and the root key
    /// paths they read; traps for a key path that names none.
    private func observedProperties(_ keyPaths: [String]?) -> ([ProjectionSchema.Property], [String]) {
        let schema = ProjectionSchema.of(self)
        var observed = schema.properties
        if let keyPaths, !keyPaths.isEmpty {
            for keyPath in keyPaths where !schema.properties.contains(where: { $0.matches(keyPath) }) {
                throwRealmException("Property '\(keyPath)' is not a projected property of '\(Self.self)': observe "
                    + "the key path a @Projected property reads (\(schema.properties.map(\.originKeyPath))) or "
                    + "its name.")
            }
            observed = schema.properties.filter { property in keyPaths.contains(where: property.matches) }
        }
        var origins = [String]()
        for property in observed where !origins.contains(property.originKeyPath) {
            origins.append(property.originKeyPath)
        }
        return (observed, origins)
    }

    /// `observe` with key paths of the projection: `observe(keyPaths: [\PersonProjection.homeCity])`.
    public func observe(keyPaths: [PartialKeyPath<Self>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken
    {
        observe(keyPaths: keyPaths.isEmpty ? nil : keyPaths.map(ProjectionSchema.originKeyPath(of:)), on: queue,
                block)
    }

    /// The root's changed properties as changes of the projected properties that read them:
    /// old values are read through the projected key path from an unmanaged copy holding the
    /// old values, new values from the object.
    fileprivate static func projectedChanges(_ changes: [PropertyChange], of object: Root,
                                         observed: [ProjectionSchema.Property]) -> [PropertyChange]
    {
        let old = Root()
        let info = ClassInfo.unbound(for: Root.self)
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(old).toOpaque())
        for change in changes {
            guard let value = change.oldValue, let field = info.field(named: change.name), field.isStored else { continue }
            _ = field.witness.setUnmanaged(at: base + field.offset, value)
        }
        var projected = [PropertyChange]()
        for change in changes {
            for property in observed where property.rootPropertyName == change.name {
                let oldValue = change.oldValue == nil ? nil : flattened(old[keyPath: property.keyPath])
                projected.append(PropertyChange(name: property.label, oldValue: oldValue,
                                                newValue: flattened(object[keyPath: property.keyPath])))
            }
        }
        return projected
    }

    /// A nil optional read through a key path as nil, not as a boxed `Optional.none`.
    private static func flattened(_ value: Any?) -> Any? {
        guard let value else { return nil }
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional { return mirror.children.first.map { flattened($0.value) } ?? nil }
        return value
    }
}

extension ProjectionSchema.Property {
    /// Whether an observed key path names this property: its root key path or its label.
    func matches(_ keyPath: String) -> Bool { keyPath == originKeyPath || keyPath == label }

    /// The root property the key path starts with: the one a change of the root names.
    var rootPropertyName: Substring { originKeyPath.split(separator: ".").first ?? Substring(originKeyPath) }
}

/// Makes projections of one class inside an actor's notification block (a `Sendable` stand-in
/// for the projection's metatype).
private struct ProjectionMaker<P: ProjectionObservable>: Sendable {
    func projection(of object: P.Root) -> P { P(projecting: object) }

    func changes(_ changes: [PropertyChange], of object: P.Root, observed: [ProjectionSchema.Property])
        -> [PropertyChange]
    {
        P.projectedChanges(changes, of: object, observed: observed)
    }
}

/// One changed projected property, as Realm declares it. Projection notifications report
/// ``PropertyChange``s (named as the projection names its properties), as Realm's do; this type
/// exists for source compatibility.
@frozen
public struct ProjectedPropertyChange {
    /// The projected property's name.
    public let name: String
    /// The value before the change; nil for collections.
    public let oldValue: Any?
    /// The value after the change; nil for collections.
    public let newValue: Any?
}
