import Dispatch
import Foundation

/// A collection's elements grouped into sections by a key, live like the ``Results`` they come
/// from: sections appear in the order their keys first appear in the sorted elements, and
/// elements keep that order within a section.
///
/// ```swift
/// let byInitial = realm.objects(Dog.self).sectioned(by: \.firstLetter, ascending: true)
/// for section in byInitial { print(section.key, section.count) }
/// ```
public struct SectionedResults<Key: _Persistable & Hashable, SectionElement: RealmCollectionValue>:
    RealmSectionedResult
{
    let results: Results<SectionElement>
    let keyBlock: (SectionElement) -> Key
    private let cache = Cache()

    final class Cache {
        var stamp: UInt64 = 0
        var sections: [(key: Key, positions: [Int])] = []
    }

    init(results: Results<SectionElement>, keyBlock: @escaping (SectionElement) -> Key) {
        self.results = results
        self.keyBlock = keyBlock
    }

    /// The sections' keys and the positions (in `results`) of their elements, in the current snapshot.
    func sections() -> [(key: Key, positions: [Int])] {
        let stamp = results.core.changeStamp
        if cache.stamp == stamp, stamp != 0 { return cache.sections }
        var order = [Key: Int]()
        var sections = [(key: Key, positions: [Int])]()
        for (position, element) in results.enumerated() {
            let key = keyBlock(element)
            if let index = order[key] {
                sections[index].positions.append(position)
            } else {
                order[key] = sections.count
                sections.append((key, [position]))
            }
        }
        cache.sections = sections
        cache.stamp = stamp
        return sections
    }

    // MARK: Collection

    public var startIndex: Int { 0 }
    public var endIndex: Int { sections().count }
    public var count: Int { sections().count }

    /// The section at `position`.
    public subscript(position: Int) -> ResultsSection<Key, SectionElement> {
        let all = sections()
        guard position >= 0, position < all.count else {
            throwRealmException("Index \(position) is out of bounds (must be less than \(all.count)).")
        }
        return ResultsSection(parent: self, key: all[position].key)
    }

    /// The element at `indexPath` (section, then item).
    public subscript(indexPath: IndexPath) -> SectionElement {
        self[indexPath[0]][indexPath[1]]
    }

    /// Every section's key, in order.
    public var allKeys: [Key] { sections().map(\.key) }

    /// The Realm of the elements.
    public var realm: Realm? { results.realm }
    /// Whether the elements belong to a frozen Realm.
    public var isFrozen: Bool { results.isFrozen }
    /// Always false, as for ``Results``.
    public var isInvalidated: Bool { false }

    /// The sections frozen at the Realm's current version.
    public func freeze() -> SectionedResults { SectionedResults(results: results.freeze(), keyBlock: keyBlock) }

    /// The live sections in a Realm on the calling thread.
    public func thaw() -> SectionedResults? {
        results.thaw().map { SectionedResults(results: $0, keyBlock: keyBlock) }
    }

    /// Equal when they section the same results.
    public static func == (lhs: SectionedResults, rhs: SectionedResults) -> Bool { lhs.results == rhs.results }
}

/// One section of ``SectionedResults``: its key and its elements, live.
public struct ResultsSection<Key: _Persistable & Hashable, Element: RealmCollectionValue>: RealmSectionedResult,
    Identifiable
{
    let parent: SectionedResults<Key, Element>
    /// The key every element of the section has.
    public let key: Key
    /// The key: a section is identified by it (SwiftUI's `ForEach(sections)`), as in Realm.
    public var id: Key { key }

    /// The Realm of the elements.
    public var realm: Realm? { parent.realm }
    /// Whether the elements belong to a frozen Realm.
    public var isFrozen: Bool { parent.isFrozen }
    /// Always false, as for ``Results``.
    public var isInvalidated: Bool { parent.isInvalidated }
    /// The section frozen at the Realm's current version.
    public func freeze() -> ResultsSection { ResultsSection(parent: parent.freeze(), key: key) }
    /// The live section in a Realm on the calling thread.
    public func thaw() -> ResultsSection? { parent.thaw().map { ResultsSection(parent: $0, key: key) } }

    /// Equal when they are the section of the same key of the same sectioned results.
    public static func == (lhs: ResultsSection, rhs: ResultsSection) -> Bool {
        lhs.key == rhs.key && lhs.parent == rhs.parent
    }

    private var positions: [Int] { parent.sections().first { $0.key == key }?.positions ?? [] }

    public var startIndex: Int { 0 }
    public var endIndex: Int { positions.count }
    public var count: Int { positions.count }

    /// The element at `position` within the section.
    public subscript(position: Int) -> Element {
        let positions = self.positions
        guard position >= 0, position < positions.count else {
            throwRealmException("Index \(position) is out of bounds (must be less than \(positions.count)).")
        }
        return parent.results[positions[position]]
    }
}

/// What changed in ``SectionedResults`` between two notifications. Two cases, as in Realm, so
/// a Realm app's exhaustive `switch` over them compiles unchanged.
@frozen
public enum SectionedResultsChange<Collection> {
    /// The sections as first evaluated.
    case initial(Collection)
    /// Rows deleted (old index paths), inserted and modified (new index paths); sections
    /// inserted and deleted.
    case update(Collection, deletions: [IndexPath], insertions: [IndexPath], modifications: [IndexPath],
                sectionsToInsert: IndexSet, sectionsToDelete: IndexSet)
}

extension Results {
    /// An identity per element for section diffs: the object, or the value with its occurrence.
    func sectionIdentities() -> [AnyHashable] {
        if isValues {
            var seen = [Element: Int]()
            return evaluatedValues(validating: false).map { value in
                let occurrence = seen[value, default: 0]
                seen[value] = occurrence + 1
                return AnyHashable([AnyHashable(value), AnyHashable(occurrence)])
            }
        }
        return keys(validating: false).map { AnyHashable($0) }
    }
}

// MARK: - Sectioning

extension RealmCollection {
    /// The elements sorted by `sortDescriptors` (at least one, Realm's message otherwise) and
    /// grouped by the key `keyBlock` gives each.
    public func sectioned<Key: _Persistable & Hashable>(sortDescriptors: [SortDescriptor],
                                                        _ keyBlock: @escaping ((Element) -> Key))
        -> SectionedResults<Key, Element>
    {
        if sortDescriptors.isEmpty {
            throwRealmException("There must be at least one SortDescriptor when using SectionedResults.")
        }
        return SectionedResults(results: sorted(by: sortDescriptors), keyBlock: keyBlock)
    }
}

extension RealmCollection {
    /// The values sorted (`ascending` or not) and grouped by the key `block` gives each: Realm's
    /// sectioning of collections of values (`names.sectioned(by: { String($0.prefix(1)) })`).
    public func sectioned<Key: _Persistable & Hashable>(by block: @escaping ((Element) -> Key), ascending: Bool = true)
        -> SectionedResults<Key, Element>
    {
        sectioned(sortDescriptors: [SortDescriptor(keyPath: "self", ascending: ascending)], block)
    }
}

extension RealmCollection where Element: ObjectBase {
    /// The objects sorted by `sortDescriptors` (the first should decide the section) and
    /// grouped by the key `block` gives each.
    public func sectioned<Key: _Persistable & Hashable>(by block: @escaping ((Element) -> Key),
                                                        sortDescriptors: [SortDescriptor])
        -> SectionedResults<Key, Element>
    {
        sectioned(sortDescriptors: sortDescriptors, block)
    }

    /// The objects sorted on `keyPath` and grouped by its value.
    public func sectioned<Key: _Persistable & Hashable>(by keyPath: KeyPath<Element, Key>, ascending: Bool = true)
        -> SectionedResults<Key, Element>
    {
        let name = QueryKeyPathNames.name(of: keyPath)
        return SectionedResults(results: sorted(by: [SortDescriptor(keyPath: name, ascending: ascending)])) {
            $0[keyPath: keyPath]
        }
    }

    /// The objects sorted by `sortDescriptors`, whose first must name `keyPath` (Realm's
    /// messages otherwise), and grouped by `keyPath`'s value.
    public func sectioned<Key: _Persistable & Hashable>(by keyPath: KeyPath<Element, Key>,
                                                        sortDescriptors: [SortDescriptor])
        -> SectionedResults<Key, Element>
    {
        guard let first = sortDescriptors.first else {
            throwRealmException("Can not section Results with empty sortDescriptor parameter.")
        }
        if QueryKeyPathNames.name(of: keyPath) != first.keyPath {
            throwRealmException("The section key path must match the primary sort descriptor.")
        }
        return SectionedResults(results: sorted(by: sortDescriptors)) { $0[keyPath: keyPath] }
    }

    /// The objects sorted on `keyPath` and grouped by the key `keyBlock` derives from each.
    public func sectioned<Key: _Persistable & Hashable, Value>(by keyPath: KeyPath<Element, Value>, ascending: Bool = true,
                                                               _ keyBlock: @escaping ((Element) -> Key))
        -> SectionedResults<Key, Element>
    {
        let name = QueryKeyPathNames.name(of: keyPath)
        return SectionedResults(results: sorted(by: [SortDescriptor(keyPath: name, ascending: ascending)]),
                                keyBlock: keyBlock)
    }
}

#if !canImport(UIKit) && !canImport(AppKit)
extension IndexPath {
    /// An index path of an item in a section (UIKit's initialiser, for code written against
    /// `SectionedResultsChange` on Apple platforms).
    public init(item: Int, section: Int) { self.init(indexes: [section, item]) }
    /// The section of a two-element index path.
    public var section: Int { self[0] }
    /// The item of a two-element index path.
    public var item: Int { self[1] }
}
#endif
