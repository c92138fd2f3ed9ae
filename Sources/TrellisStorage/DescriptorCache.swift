import Foundation

/// The tree descriptors of the catalog read last, shared by the environment's read and write
/// transactions: a transaction on the same catalog finds its trees without walking it again.
///
/// Keyed by the catalog root's reference (page and checksum), which names the catalog's content:
/// a commit number alone could be reused (a commit whose sync failed is taken back and the next
/// one gets its number).
///
/// A commit's changes are not applied when it publishes (``advance(from:to:changes:)``) but at
/// the next lookup: a run of small commits with no lookup between them (the writer finds its
/// trees in `CarriedTrees`) keeps one pending change per tree name, replaced in place, instead
/// of hashing every name it wrote into the dictionary at each commit (issue 37).
final class DescriptorCache: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`: not checked for exclusive access at run time as well (the checks cost
    // more than the rest of an advance).
    /// The catalog the cache describes: `descriptors` with `pending` applied.
    @exclusivity(unchecked) private var catalog: PageReference?
    @exclusivity(unchecked) private var descriptors: [String: TreeDescriptor?] = [:]
    /// Changes of the commits since `descriptors` were last brought up to date (nil descriptor:
    /// the tree was dropped), one a name, the newest; applied before any lookup.
    @exclusivity(unchecked) private var pending: [(name: String, descriptor: TreeDescriptor?)] = []
    /// Distinct names kept pending at most (then they are applied at once).
    static let pendingLimit = 16

    /// The descriptor of `name` in `catalog`, from the cache or from `load` (then remembered).
    func descriptor(_ name: String, catalog: PageReference?,
                    load: () throws -> TreeDescriptor?) rethrows -> TreeDescriptor? {
        lock.lock()
        if self.catalog == catalog {
            if !pending.isEmpty { applyPending() }
            if let cached = descriptors[name] {
                lock.unlock()
                return cached
            }
        }
        lock.unlock()
        let loaded = try load()
        lock.lock()
        defer { lock.unlock() }
        if self.catalog != catalog {
            self.catalog = catalog
            descriptors.removeAll(keepingCapacity: true)
            pending.removeAll(keepingCapacity: true)
        } else if !pending.isEmpty {
            applyPending()
        }
        descriptors[name] = .some(loaded)
        return loaded
    }

    /// After a commit published the catalog `new`, made from `old` by `changes` (a nil
    /// descriptor: the tree was dropped): the cache moves to `new`, keeping what it knew of `old`
    /// (every other tree is as it was) with the changes to be applied at the next lookup, so
    /// that the next transactions find the trees this commit touched without walking the new
    /// catalog.
    func advance(from old: PageReference?, to new: PageReference?, changes: [(name: String, descriptor: TreeDescriptor?)]) {
        lock.lock()
        defer { lock.unlock() }
        if catalog != old {
            descriptors.removeAll(keepingCapacity: true)
            pending.removeAll(keepingCapacity: true)
        }
        catalog = new
        for change in changes {
            // Lengths first: most names compared differ, and a length is one load.
            let length = change.name.utf8.count
            if let index = pending.firstIndex(where: { $0.name.utf8.count == length && $0.name == change.name }) {
                pending[index].descriptor = change.descriptor
            } else {
                pending.append(change)
            }
        }
        if pending.count > Self.pendingLimit { applyPending() }
    }

    /// Whether changes wait to be applied (tests).
    var hasPendingChanges: Bool { lock.withLock { !pending.isEmpty } }

    /// Applies `pending` to `descriptors` (under `lock`).
    private func applyPending() {
        for (name, descriptor) in pending { descriptors[name] = .some(descriptor) }
        pending.removeAll(keepingCapacity: true)
    }
}
