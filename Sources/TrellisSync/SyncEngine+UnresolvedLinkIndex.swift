import Foundation
import Trellis
import TrellisSyncProtocol

/// Unresolved-link records of files synced before the records were also kept by linking object
/// (`r/`, session 29): only `u/` records, by target. Such a record did not go with its object
/// (deleted, out of the subscriptions) or its link (the server's document names another object
/// now), so a file could keep it for good, and a later object stored under the same key could
/// have its links rewritten for a target it never named. When the session connects, each
/// object with such records has them made again from its mirror (the server's document), with
/// both entries; the records of objects gone are dropped.
extension SyncEngine {
    /// Indexes (or drops) the `u/` records without their `r/` entry. One seek when the file has
    /// no record; otherwise a read of the records, and a write only when one lacks its entry.
    func indexUnresolvedLinks(_ realm: Realm) throws {
        guard hasUnresolvedLinks(realm) else { return }
        var entries = [[UInt8]]()
        realm.syncStoreForEach(prefix: SyncStoreLayout.unresolvedPrefix) { key, _ in
            entries.append(Array(key))
            return true
        }
        // The linking objects with a record lacking its entry, and those records.
        var sources = [(className: String, objectKey: UInt64)]()
        var unindexed = [String: [[UInt8]]]()
        for key in entries {
            guard let entry = SyncStoreLayout.unresolvedEntry(key) else { continue }
            let reverse = SyncStoreLayout.unresolved(from: entry.className, entry.objectKey, to: entry.target)
            if realm.syncStoreGet(reverse) != nil { continue }
            let id = entry.className + "\u{0}" + String(entry.objectKey)
            if unindexed[id] == nil { sources.append((entry.className, entry.objectKey)) }
            unindexed[id, default: []].append(key)
        }
        guard !sources.isEmpty else { return }
        realm.beginWrite()
        realm.isApplyingSyncDownload = true
        defer { realm.isApplyingSyncDownload = false }
        do {
            let decoder = ExtendedJSONBatchDecoder(realm: realm, skipsMissingLinks: true)
            for source in sources {
                for key in unindexed[source.className + "\u{0}" + String(source.objectKey)] ?? [] {
                    try realm.syncStoreDelete(key)
                }
                try dropUnresolvedLinks(from: source.className, source.objectKey, in: realm)
                // The links its document names that are still missing, as a download records them.
                guard realm.syncObject(className: source.className, objectKey: source.objectKey) != nil,
                      let mirror = SyncStoreLayout.mirrorEntry(realm, SyncStoreLayout.mirror(source.className, source.objectKey)),
                      let schema = decoder.objectSchema(source.className),
                      (try? decoder.values(mirror.document.mapValues(\.decodableObject), schema: schema)) != nil
                else { continue }
                try recordUnresolvedLinks(decoder.missingTargets, from: source.className, source.objectKey, in: realm)
            }
            try realm.commitWrite()
        } catch {
            if realm.isInWriteTransaction { realm.cancelWrite() }
            throw error
        }
    }
}
