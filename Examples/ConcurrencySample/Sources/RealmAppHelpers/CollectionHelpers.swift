// Compile-only: helper code in the style of an existing Realm app, written against Realm's
// generic protocols. It must build unchanged with `import Trellis` (Swift 6, complete
// concurrency checking, warnings as errors).
import Foundation
import Trellis

public final class Dog: Object {
    @Persisted(primaryKey: true) public var _id: ObjectId
    @Persisted public var name = ""
    @Persisted public var age = 0
    @Persisted public var scores: List<Int>
    @Persisted(originProperty: "dogs") public var owners: LinkingObjects<Owner>
}

public final class Owner: Object {
    @Persisted public var name = ""
    @Persisted public var dogs: List<Dog>
    @Persisted public var favourites: MutableSet<Dog>
}

/// The oldest dog of any collection of dogs.
public func oldest<C: RealmCollection>(_ dogs: C) -> Dog? where C.Element == Dog {
    dogs.sorted(byKeyPath: "age", ascending: false).first
}

/// The names of the dogs matching a predicate, from any collection.
public func names<C: RealmCollection>(in dogs: C, matching predicate: String) -> [String] where C.Element == Dog {
    dogs.filter(predicate).map(\.name)
}

/// The total of any collection of summable values.
public func total<C: RealmCollection>(_ values: C) -> C.Element
    where C.Element: AddableType, C.Element.PersistedType: AddableType
{
    values.sum()
}

/// The range of any collection of values with a minimum and a maximum.
public func range<C: RealmCollection>(_ values: C) -> ClosedRange<C.Element>?
    where C.Element: MinMaxType & Comparable, C.Element.PersistedType: MinMaxType
{
    guard let low = values.min(), let high = values.max() else { return nil }
    return low...high
}

extension RealmCollection where Element == Dog {
    /// The dogs old enough to compete.
    public var adults: Results<Dog> { filter("age >= %@", 2) }

    /// The average age, or nil for no dogs.
    public var averageAge: Double? { average(ofProperty: "age") }
}

/// A view model that shows any collection of dogs: a class's results, an owner's list or set,
/// a dog's owners' dogs.
public final class DogsViewModel {
    public private(set) var dogs: AnyRealmCollection<Dog>
    private var token: NotificationToken?
    public private(set) var changes = 0

    public init(_ dogs: AnyRealmCollection<Dog>) {
        self.dogs = dogs
    }

    public func show<C: RealmCollection>(_ collection: C) where C.Element == Dog {
        dogs = AnyRealmCollection(collection)
    }

    public func startObserving() {
        token = dogs.observe { [weak self] change in
            if case .update = change { self?.changes += 1 }
        }
    }

    public var title: String { "\(dogs.count) dogs, oldest \(oldest(dogs)?.name ?? "none")" }
}

/// Passing `Results<Dog>` where `AnyRealmCollection<Dog>` is expected.
public func makeViewModels(_ realm: Realm, owner: Owner) -> [DogsViewModel] {
    [DogsViewModel(AnyRealmCollection(realm.objects(Dog.self))),
     DogsViewModel(AnyRealmCollection(owner.dogs)),
     DogsViewModel(AnyRealmCollection(owner.favourites))]
}
