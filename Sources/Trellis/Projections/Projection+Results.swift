import Dispatch

/// What `Realm.objects(_:)` can fetch: model classes and projections of them, as in Realm.
public protocol RealmFetchable: RealmCollectionValue {
    /// The name of the class whose objects are fetched.
    static func className() -> String
}

extension Object: RealmFetchable {}

extension Projection: RealmFetchable {
    /// The projected class's name: projections are fetched from its objects.
    public class func className() -> String { Root.className() }
}

extension Realm {
    /// Projections of every object of the projected class, lazily evaluated and live:
    /// `realm.objects(PersonProjection.self)`.
    ///
    /// They filter and sort like results of the root class: by the root's property names in
    /// predicate text (`filter("firstName BEGINSWITH 'A'")`), or by the projection's key paths
    /// (`where { $0.name == "Ann" }`, `sorted(by: \.homeCity)`), mapped to the root's.
    public func objects<Element: RealmFetchable & ProjectionObservable>(_ type: Element.Type) -> Results<Element> {
        core.verifyThread()
        return Results(core: core, source: .table(Element.Root.self))
    }
}

extension Query where T: ProjectionObservable {
    /// A projected property, queried as the root property its key path reads
    /// (`$0.homeCity` on a projection with `@Projected(\Person.address?.city) var homeCity`
    /// queries `address.city`).
    public subscript<V>(dynamicMember keyPath: KeyPath<T, V>) -> Query<V> {
        appending(propertyPath: ProjectionSchema.originKeyPath(of: keyPath))
    }
}

extension Results where Element: ProjectionObservable {
    /// The projections sorted on a projected property (sorted by the root property it reads).
    public func sorted<V>(by keyPath: KeyPath<Element, V>, ascending: Bool = true) -> Results {
        sorted(by: [SortDescriptor(keyPath: ProjectionSchema.originKeyPath(of: keyPath), ascending: ascending)])
    }

    /// The first projection of each distinct combination of the projected properties' values.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results where S.Element == PartialKeyPath<Element> {
        distinct(by: keyPaths.map(ProjectionSchema.originKeyPath(of:)))
    }

    /// `observe` with the projection's key paths: `observe(keyPaths: [\PersonProjection.name])`
    /// counts a change to the root property a projected property reads as a modification.
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<Results>) -> Void) -> NotificationToken
    {
        observe(keyPaths: keyPaths.map(ProjectionSchema.originKeyPath(of:)), on: queue, block)
    }
}

extension RealmCollection where Element: ProjectionObservable {
    /// The projections sorted on a projected property and grouped by its value.
    public func sectioned<Key: _Persistable & Hashable>(by keyPath: KeyPath<Element, Key>, ascending: Bool = true)
        -> SectionedResults<Key, Element>
    {
        let name = ProjectionSchema.originKeyPath(of: keyPath)
        return SectionedResults(results: sorted(by: [SortDescriptor(keyPath: name, ascending: ascending)])) {
            $0[keyPath: keyPath]
        }
    }

    /// The projections sorted by `sortDescriptors`, whose first must name the root key path
    /// `keyPath` reads (Realm's message otherwise), and grouped by `keyPath`'s value.
    public func sectioned<Key: _Persistable & Hashable>(by keyPath: KeyPath<Element, Key>,
                                                        sortDescriptors: [SortDescriptor])
        -> SectionedResults<Key, Element>
    {
        guard let first = sortDescriptors.first else {
            throwRealmException("Can not section Results with empty sortDescriptor parameter.")
        }
        if ProjectionSchema.originKeyPath(of: keyPath) != first.keyPath {
            throwRealmException("The section key path must match the primary sort descriptor.")
        }
        return SectionedResults(results: sorted(by: sortDescriptors)) { $0[keyPath: keyPath] }
    }

    /// The projections sorted by `sortDescriptors` and grouped by the key `block` gives each.
    public func sectioned<Key: _Persistable & Hashable>(by block: @escaping ((Element) -> Key),
                                                        sortDescriptors: [SortDescriptor])
        -> SectionedResults<Key, Element>
    {
        sectioned(sortDescriptors: sortDescriptors, block)
    }
}
