import Foundation

/// The tree descriptors of the catalog read last, shared by the environment's read and write
/// transactions: a transaction on the same catalog finds its trees without walking it again.
///
/// Keyed by the catalog root's reference (page and checksum), which names the catalog's content:
/// a commit number alone could be reused (a commit whose sync failed is taken back and the next
/// one gets its number).
final class DescriptorCache: @unchecked Sendable {
    private let lock = NSLock()
    private var catalog: PageReference?
    private var descriptors: [String: TreeDescriptor?] = [:]

    /// The descriptor of `name` in `catalog`, from the cache or from `load` (then remembered).
    func descriptor(_ name: String, catalog: PageReference?,
                    load: () throws -> TreeDescriptor?) rethrows -> TreeDescriptor? {
        lock.lock()
        if self.catalog == catalog, let cached = descriptors[name] {
            lock.unlock()
            return cached
        }
        lock.unlock()
        let loaded = try load()
        lock.lock()
        defer { lock.unlock() }
        if self.catalog != catalog {
            self.catalog = catalog
            descriptors.removeAll(keepingCapacity: true)
        }
        descriptors[name] = .some(loaded)
        return loaded
    }

    /// After a commit published the catalog `new`, made from `old` by `changes` (a nil
    /// descriptor: the tree was dropped): the cache moves to `new`, keeping what it knew of `old`
    /// (every other tree is as it was) with the changes applied, so that the next transactions
    /// find the trees this commit touched without walking the new catalog.
    func advance(from old: PageReference?, to new: PageReference?, changes: [(name: String, descriptor: TreeDescriptor?)]) {
        lock.lock()
        defer { lock.unlock() }
        if catalog != old { descriptors.removeAll(keepingCapacity: true) }
        catalog = new
        for (name, descriptor) in changes { descriptors[name] = .some(descriptor) }
    }
}
