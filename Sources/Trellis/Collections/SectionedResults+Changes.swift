import Foundation

/// Turns the changes of the results under sectioned results into section changes the way
/// Realm does, keeping the previous sections to map old rows to their index paths.
///
/// Realm's rules (realm-core's sectioned results notifier): rows inserted and deleted in the
/// results are inserted and deleted at their index path (new and old); rows of a section that
/// went are not listed, the section is; a modified row is a modification only when its index
/// path (old section, row) is the same before and after, otherwise a deletion at the old path
/// and an insertion at the new one, so a row that changes section, or moves because a section
/// before it came or went, is reported as deleted and inserted.
final class SectionTracker<Key: _Persistable & Hashable, Element: RealmCollectionValue> {
    let keyBlock: (Element) -> Key
    private var previous = SectionLayout<Key>(sections: [], rowCount: 0)
    private var previousIdentities: [AnyHashable] = []

    init(keyBlock: @escaping (Element) -> Key) { self.keyBlock = keyBlock }

    /// The sections after `change`, with the grouped change (nil for the initial call); nil
    /// for an error (Realm's ``SectionedResultsChange`` has no error case; collection
    /// observation never reports one). With `section`, only that section's changes count.
    func track(_ change: RealmCollectionChange<Results<Element>>, only section: Key?)
        -> (SectionedResults<Key, Element>, GroupedSectionChange?)?
    {
        switch change {
        case .initial(let results):
            let sectioned = SectionedResults(results: results, keyBlock: keyBlock)
            remember(sectioned, results)
            return (sectioned, nil)
        case .update(let results, let deletions, let insertions, let modifications):
            let sectioned = SectionedResults(results: results, keyBlock: keyBlock)
            let old = previous, oldIdentities = previousIdentities
            remember(sectioned, results)
            let newIdentities = previousIdentities
            // The observer gives modifications at their old position; Realm also needs the
            // new one (the same object, or for values the same position).
            var newPosition = [AnyHashable: Int]()
            for (position, identity) in newIdentities.enumerated() where newPosition[identity] == nil {
                newPosition[identity] = position
            }
            let modificationsNew = modifications.compactMap { old -> Int? in
                if old < oldIdentities.count, let new = newPosition[oldIdentities[old]] { return new }
                return old < newIdentities.count ? old : nil
            }
            let grouped = GroupedSectionChange(old: old, new: previous, deletions: deletions, insertions: insertions,
                                               modifications: modifications, modificationsNew: modificationsNew,
                                               only: section)
            return (sectioned, grouped)
        case .error:
            return nil
        }
    }

    private func remember(_ sectioned: SectionedResults<Key, Element>, _ results: Results<Element>) {
        let sections = sectioned.sections()
        previousIdentities = results.sectionIdentities()
        previous = SectionLayout(sections: sections, rowCount: previousIdentities.count)
    }
}

/// Where each row of the results sits in the sections: its (section, row) index path.
struct SectionLayout<Key: Hashable> {
    let keys: [Key]
    let indexOfKey: [Key: Int]
    let paths: [(section: Int, row: Int)]

    init(sections: [(key: Key, positions: [Int])], rowCount: Int) {
        keys = sections.map(\.key)
        indexOfKey = Dictionary(sections.enumerated().map { ($1.key, $0) }, uniquingKeysWith: { first, _ in first })
        var paths = [(section: Int, row: Int)](repeating: (-1, -1), count: rowCount)
        for (section, entry) in sections.enumerated() {
            for (row, position) in entry.positions.enumerated() where position < rowCount {
                paths[position] = (section, row)
            }
        }
        self.paths = paths
    }

    func path(_ position: Int) -> (section: Int, row: Int)? {
        guard position >= 0, position < paths.count, paths[position].section >= 0 else { return nil }
        return paths[position]
    }
}

/// A change of sectioned results grouped by section, as Realm reports it.
struct GroupedSectionChange {
    private(set) var deletions = [Int: IndexSet]()
    private(set) var insertions = [Int: IndexSet]()
    private(set) var modifications = [Int: IndexSet]()
    private(set) var sectionsToInsert = IndexSet()
    private(set) var sectionsToDelete = IndexSet()

    var isEmpty: Bool {
        deletions.isEmpty && insertions.isEmpty && modifications.isEmpty && sectionsToInsert.isEmpty
            && sectionsToDelete.isEmpty
    }

    /// Groups the results' change (`deletions` and `modifications` at old positions,
    /// `insertions` and `modificationsNew` at new ones). With `filter`, only that section's
    /// rows and its own coming or going.
    init<Key: Hashable>(old: SectionLayout<Key>, new: SectionLayout<Key>, deletions: [Int], insertions: [Int],
                        modifications: [Int], modificationsNew: [Int], only filter: Key?)
    {
        var newModifications = [Int: IndexSet]()
        let keepOld: (Int) -> Bool, keepNew: (Int) -> Bool
        if let filter {
            let oldIndex = old.indexOfKey[filter], newIndex = new.indexOfKey[filter]
            switch (oldIndex, newIndex) {
            case (nil, nil): return
            case (nil, let inserted?): sectionsToInsert.insert(inserted)
            case (let deleted?, nil): sectionsToDelete.insert(deleted)
            default: break
            }
            keepOld = { $0 == oldIndex }
            keepNew = { $0 == newIndex }
            // Rows deleted inside the section are listed only while the section stays.
            let sectionStays = newIndex != nil
            Self.add(deletions, old, into: &self.deletions) { sectionStays && keepOld($0) }
        } else {
            for (index, key) in new.keys.enumerated() where old.indexOfKey[key] == nil { sectionsToInsert.insert(index) }
            for (index, key) in old.keys.enumerated() where new.indexOfKey[key] == nil { sectionsToDelete.insert(index) }
            keepOld = { _ in true }
            keepNew = { _ in true }
            let deletedSections = sectionsToDelete
            Self.add(deletions, old, into: &self.deletions) { !deletedSections.contains($0) }
        }
        Self.add(insertions, new, into: &self.insertions, keepNew)
        Self.add(modifications, old, into: &self.modifications, keepOld)
        Self.add(modificationsNew, new, into: &newModifications, keepNew)

        // A modified row stays a modification only at the same (section, row) before and after.
        for (oldSection, rows) in self.modifications {
            guard let newSection = new.indexOfKey[old.keys[oldSection]] else {
                self.modifications[oldSection] = nil  // its section went: the section says it
                continue
            }
            let stillThere = rows.intersection(newModifications[newSection] ?? IndexSet())
            newModifications[newSection]?.subtract(stillThere)
            let moved = rows.subtracting(stillThere)
            if !moved.isEmpty { self.deletions[oldSection, default: IndexSet()].formUnion(moved) }
            self.modifications[oldSection] = stillThere.isEmpty ? nil : stillThere
        }
        for (section, rows) in newModifications where !rows.isEmpty {
            self.insertions[section, default: IndexSet()].formUnion(rows)
        }
    }

    private static func add<Key>(_ positions: [Int], _ layout: SectionLayout<Key>, into groups: inout [Int: IndexSet],
                                 _ keep: (Int) -> Bool)
    {
        for position in positions {
            guard let path = layout.path(position), keep(path.section) else { continue }
            groups[path.section, default: IndexSet()].insert(path.row)
        }
    }

    private static func indexPaths(_ groups: [Int: IndexSet]) -> [IndexPath] {
        groups.keys.sorted().flatMap { section in groups[section, default: IndexSet()].map { IndexPath(item: $0, section: section) } }
    }

    /// The change as Realm's ``SectionedResultsChange``, index paths in section then row order.
    func change<C>(of collection: C) -> SectionedResultsChange<C> {
        .update(collection, deletions: Self.indexPaths(deletions), insertions: Self.indexPaths(insertions),
                modifications: Self.indexPaths(modifications), sectionsToInsert: sectionsToInsert,
                sectionsToDelete: sectionsToDelete)
    }
}
