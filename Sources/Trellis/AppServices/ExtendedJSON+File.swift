import Foundation

extension ExtendedJSON {
    /// The Extended JSON documents of every top-level class of a file, read by the schema stored
    /// in the file (no model classes needed): class name → one document per object.
    ///
    /// - Parameters:
    ///   - encryptionKey: the 64-byte key of an encrypted file (nil for a plain one).
    ///   - progress: called after each document with the number done and the total.
    /// - Throws: ``Realm/Error`` for a missing, damaged or non-Trellis file, a key that does not
    ///   open it, or a link to a class without a primary key.
    public static func documents(inFile url: URL, encryptionKey: Data? = nil,
                                 progress: ((_ done: Int, _ total: Int) -> Void)? = nil) throws -> [String: [Data]]
    {
        let realm = try Realm(configuration: .storedSchema(fileURL: url, readOnly: true, encryptionKey: encryptionKey))
        let reader = StoredObjectReader(core: realm.core)
        let classes = realm.core.file.catalog.classes.filter { !$0.embedded }
        let keys = classes.map { reader.keys(of: $0.name) }
        let total = keys.reduce(0) { $0 + $1.count }
        var done = 0
        var result = [String: [Data]]()
        for (stored, classKeys) in zip(classes, keys) {
            result[stored.name] = try classKeys.map { key in
                let document = try JSONSerialization.data(withJSONObject: reader.document(stored.name, key: key) ?? [:],
                                                          options: [.sortedKeys, .withoutEscapingSlashes])
                done += 1
                progress?(done, total)
                return document
            }
        }
        return result
    }
}
