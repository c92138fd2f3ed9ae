import Foundation

/// What a database file holds, read without the model classes (from the schema stored in the
/// file): its classes with their properties and object counts, sizes and schema version.
///
/// ```swift
/// let inspection = try FileInspection(fileURL: url)
/// for summary in inspection.classes { print(summary.schema.className, summary.objectCount) }
/// ```
public struct FileInspection: Sendable {
    /// One stored class.
    public struct ClassSummary: Sendable {
        /// The class's stored schema.
        public let schema: ObjectSchema
        /// How many objects of the class the file holds.
        public let objectCount: Int
    }

    /// The file's path.
    public let path: String
    /// The file's size on disk in bytes.
    public let fileSize: Int
    /// The bytes the newest version uses (the rest is free pages and preallocated room).
    public let usedSize: Int
    /// The schema version the file was last opened with.
    public let schemaVersion: UInt64
    /// The stored classes, by name.
    public let classes: [ClassSummary]

    /// The stored schema.
    public var schema: Schema { Schema(classes.map(\.schema)) }

    /// Opens the file read-only (it is not changed).
    ///
    /// - Parameter encryptionKey: the 64-byte key of an encrypted file (nil for a plain one), as
    ///   ``Realm/Configuration/encryptionKey``.
    /// - Throws: ``Realm/Error`` for a missing, damaged or non-Trellis file, or a key that does
    ///   not open it (`.invalidDatabase`).
    public init(fileURL: URL, encryptionKey: Data? = nil) throws {
        let realm = try Realm(configuration: .storedSchema(fileURL: fileURL, readOnly: true,
                                                           encryptionKey: encryptionKey))
        let core = realm.core
        let catalog = core.file.catalog
        path = core.environmentPath
        fileSize = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
        usedSize = core.file.environment.usedBytes()
        schemaVersion = catalog.schemaVersion
        let transaction = core.transaction
        classes = catalog.classes.sorted { $0.name < $1.name }.map { stored in
            let rows = Table.existingRows(of: stored.name, in: transaction)
            return ClassSummary(schema: stored.objectSchema, objectCount: rows.map(transaction.entryCount) ?? 0)
        }
    }
}
