import Foundation
import Testing
@testable import TrellisStorage
import TrellisTestSupport

/// A commit's descriptor changes are applied to the environment's descriptor cache at the next
/// lookup, not at the commit (issue 37): what the cache answers must be the same as if they had
/// been applied at once, whatever commits, drops, other environments' commits and lookups come
/// in between.
@Suite struct LazyDescriptorAdvanceTests {
    private static func descriptor(_ count: UInt64, page: UInt64 = 9) -> TreeDescriptor {
        TreeDescriptor(root: PageReference(page: page, checksum: count), count: count, order: .bytes, depth: 1)
    }

    private static func catalog(_ number: UInt64) -> PageReference { PageReference(page: 100 + number, checksum: number) }

    /// Several advances with no lookup between them answer each tree's newest descriptor (one
    /// pending change a name), a dropped tree's nil, and every other tree as it was cached.
    @Test func lookupsAfterSeveralAdvancesSeeTheNewestChangeOfEachTree() throws {
        let cache = DescriptorCache()
        var loads = 0
        let load = { (descriptor: TreeDescriptor?) -> () -> TreeDescriptor? in { loads += 1; return descriptor } }
        _ = cache.descriptor("kept", catalog: Self.catalog(0), load: load(Self.descriptor(1)))
        _ = cache.descriptor("dropped", catalog: Self.catalog(0), load: load(Self.descriptor(2)))
        for commit in 1...5 {
            var changes: [(name: String, descriptor: TreeDescriptor?)] = [
                ("a", Self.descriptor(UInt64(10 + commit))), ("b", Self.descriptor(UInt64(20 + commit))),
            ]
            if commit == 3 { changes.append(("dropped", nil)) }
            cache.advance(from: Self.catalog(UInt64(commit - 1)), to: Self.catalog(UInt64(commit)), changes: changes)
        }
        #expect(cache.hasPendingChanges)
        loads = 0
        let unexpected = load(Self.descriptor(999))
        #expect(cache.descriptor("a", catalog: Self.catalog(5), load: unexpected) == Self.descriptor(15))
        #expect(!cache.hasPendingChanges)
        #expect(cache.descriptor("b", catalog: Self.catalog(5), load: unexpected) == Self.descriptor(25))
        #expect(cache.descriptor("kept", catalog: Self.catalog(5), load: unexpected) == Self.descriptor(1))
        #expect(cache.descriptor("dropped", catalog: Self.catalog(5), load: unexpected) == nil)
        #expect(loads == 0, "every answer came from the cache")
    }

    /// Pending changes of one catalog are never applied to another: an advance from a catalog the
    /// cache does not describe (another process committed between) and a lookup on another
    /// catalog both start over, loading what they ask for.
    @Test func pendingChangesAreDroppedWhenTheCatalogMovesElsewhere() throws {
        let cache = DescriptorCache()
        _ = cache.descriptor("a", catalog: Self.catalog(0)) { Self.descriptor(1) }
        cache.advance(from: Self.catalog(0), to: Self.catalog(1), changes: [("a", Self.descriptor(2))])
        // A lookup on another process's catalog: loaded, and the pending change is not applied there.
        #expect(cache.descriptor("a", catalog: Self.catalog(7)) { Self.descriptor(70) } == Self.descriptor(70))
        #expect(!cache.hasPendingChanges)
        #expect(cache.descriptor("a", catalog: Self.catalog(7)) { Self.descriptor(999) } == Self.descriptor(70))
        // An advance from a catalog the cache does not describe keeps nothing of what it held.
        cache.advance(from: Self.catalog(8), to: Self.catalog(9), changes: [("b", Self.descriptor(3))])
        #expect(cache.descriptor("a", catalog: Self.catalog(9)) { Self.descriptor(90) } == Self.descriptor(90))
        #expect(cache.descriptor("b", catalog: Self.catalog(9)) { Self.descriptor(999) } == Self.descriptor(3))
    }

    /// More distinct names than ``DescriptorCache/pendingLimit`` are applied at the advance.
    @Test func manyDistinctTreesAreAppliedAtTheAdvance() throws {
        let cache = DescriptorCache()
        let changes: [(name: String, descriptor: TreeDescriptor?)] = (0...DescriptorCache.pendingLimit).map {
            ("tree\($0)", Self.descriptor(UInt64($0)))
        }
        cache.advance(from: nil, to: Self.catalog(1), changes: changes)
        #expect(!cache.hasPendingChanges)
        for (name, descriptor) in changes {
            #expect(cache.descriptor(name, catalog: Self.catalog(1)) { Self.descriptor(999) } == descriptor)
        }
    }

    /// Small commits in a row (the writer finds its trees carried from its last commit) leave
    /// their changes pending; a read transaction afterwards sees every tree as the last commit
    /// left it, and so does another environment on the file (another process), whose commit,
    /// creating a tree, this environment then sees too.
    @Test func smallCommitsLeaveTheirChangesPendingAndEveryReaderSeesThem() throws {
        let directory = temporaryDirectory("lazy-descriptors")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = StorageEnvironment.Options()
        options.syncOnCommit = false
        let path = directory + "/lazy.db"
        let environment = try StorageEnvironment(path: path, options: options)
        defer { environment.close() }
        try environment.write { write in
            try write.createTree("objects", order: .bytes)
            try write.createTree("log", order: .bytes)
        }
        for round in UInt8(0)..<20 {
            try environment.write { write in
                try write.put("objects", key: [round], value: [round, 1])
                try write.put("log", key: [round], value: [round, 2])
            }
        }
        #expect(environment.descriptors.hasPendingChanges, "the commits applied their changes to the cache")
        try environment.read { (read: ReadTransaction) throws in
            #expect(try read.info("objects")?.count == 20)
            #expect(try read.info("log")?.count == 20)
            #expect(try read.get("objects", key: [19]) == [19, 1])
            #expect(try read.get("log", key: [19]) == [19, 2])
        }
        // Another process's commit creates a tree while this environment's changes are pending.
        try environment.write { write in try write.put("objects", key: [20], value: [20, 1]) }
        #expect(environment.descriptors.hasPendingChanges)
        let other = try StorageEnvironment(path: path, options: options)
        try other.write { write in
            try write.createTree("created elsewhere", order: .bytes)
            try write.put("created elsewhere", key: [1], value: [7])
            try write.put("objects", key: [21], value: [21, 1])
        }
        other.close()
        try environment.read { (read: ReadTransaction) throws in
            #expect(try read.get("created elsewhere", key: [1]) == [7])
            #expect(try read.info("objects")?.count == 22)
            #expect(try read.get("objects", key: [20]) == [20, 1])
        }
        try environment.write { write in
            #expect(try write.info("created elsewhere")?.count == 1)
            try write.put("objects", key: [22], value: [22, 1])
        }
        try environment.read { (read: ReadTransaction) throws in
            #expect(try read.info("objects")?.count == 23)
        }
        _ = try environment.check()
    }
}
