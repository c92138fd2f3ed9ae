import Foundation

extension ExtendedJSON {
    /// The Extended JSON documents of every top-level class of a file, read by the schema stored
    /// in the file (no model classes needed): class name → one document per object.
    ///
    /// - Throws: ``Realm/Error`` for a missing, damaged or non-Trellis file, or a link to a class
    ///   without a primary key.
    public static func documents(inFile url: URL) throws -> [String: [Data]] {
        let realm = try Realm(configuration: .init(fileURL: url, readOnly: true))
        let reader = StoredObjectReader(core: realm.core)
        var result = [String: [Data]]()
        for stored in realm.core.file.catalog.classes where !stored.embedded {
            result[stored.name] = try reader.keys(of: stored.name).map { key in
                try JSONSerialization.data(withJSONObject: reader.document(stored.name, key: key) ?? [:],
                                           options: [.sortedKeys, .withoutEscapingSlashes])
            }
        }
        return result
    }
}
