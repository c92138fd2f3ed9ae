import Foundation

/// Called when a file is opened with a higher ``Realm/Configuration/schemaVersion`` than it was
/// written with, as in Realm:
///
/// ```swift
/// config.schemaVersion = 2
/// config.migrationBlock = { migration, oldSchemaVersion in
///     if oldSchemaVersion < 2 {
///         migration.enumerateObjects(ofType: "Person") { oldObject, newObject in
///             newObject!["fullName"] = "\(oldObject!["firstName"]!) \(oldObject!["lastName"]!)"
///         }
///     }
/// }
/// ```
///
/// Additive changes need no code: new classes and properties start empty or at their default,
/// removed properties are dropped, values of unchanged properties are kept.
public typealias MigrationBlock = @Sendable (_ migration: Migration, _ oldSchemaVersion: UInt64) -> Void

/// What ``Migration/enumerateObjects(ofType:_:)`` calls once per object: its values before the
/// migration (`oldObject`) and the object being written (`newObject`), as in Realm.
public typealias MigrationObjectEnumerateBlock = (_ oldObject: MigrationObject?, _ newObject: MigrationObject?) -> Void

/// The changes of one migration, handed to a ``MigrationBlock``. Everything it does is part of
/// one write transaction: if opening fails, the file is left as it was.
public final class Migration {
    let migrator: Migrator

    init(migrator: Migrator) {
        self.migrator = migrator
    }

    /// The schema stored in the file before the migration.
    public var oldSchema: Schema { migrator.oldSchema }
    /// The schema of the configured models.
    public var newSchema: Schema { migrator.newSchema }

    /// Calls `block` once per object of the class with its values before the migration
    /// (`oldObject`, nil for a class new in this version) and the object being written
    /// (`newObject`, nil for a class no longer in the models). Setting a property of
    /// `newObject` sets the migrated value.
    public func enumerateObjects(ofType typeName: String, _ block: MigrationObjectEnumerateBlock) {
        migrator.enumerate(typeName, block)
    }

    /// Creates an object of a class of the new schema, with values by property name.
    @discardableResult
    public func create(_ typeName: String, value: Any = [String: Any]()) -> MigrationObject {
        migrator.create(typeName, value: value)
    }

    /// Deletes an object handed to the block (as `newObject`).
    public func delete(_ object: MigrationObject) {
        migrator.delete(object)
    }

    /// Deletes every object of a class, and the class itself if it is no longer in the
    /// models. Returns whether the file had the class.
    @discardableResult
    public func deleteData(forType typeName: String) -> Bool {
        migrator.deleteData(forType: typeName)
    }

    /// Moves the values of property `oldName` to the new property `newName` (a rename keeps
    /// the data, where removing and adding would lose it).
    public func renameProperty(onType typeName: String, from oldName: String, to newName: String) {
        migrator.renameProperty(onType: typeName, from: oldName, to: newName)
    }
}

/// An object during a migration, as in Realm: a ``DynamicObject`` read and written by property
/// name (`object["name"]`, `object.name`).
///
/// Reading gives `Int`, `String`, `Double`, `Bool`, `Date`, `ObjectId`, … or nil; a to-one
/// link gives the linked `MigrationObject`; a list or set gives an array of elements, a map a
/// `[String: Any]`. An old object is read-only and names its properties as the file stored
/// them (their persisted names, see ``ObjectBase/propertiesMapping()``); a new object names
/// them as the model does.
public typealias MigrationObject = DynamicObject

/// What a ``DynamicObject`` handed to a migration block reads and writes: one migrated object,
/// before (`isOld`) or after the migration.
final class MigrationEntry {
    let record: MigrationRecord
    let isOld: Bool
    unowned let migrator: Migrator

    init(record: MigrationRecord, isOld: Bool, migrator: Migrator) {
        self.record = record
        self.isOld = isOld
        self.migrator = migrator
    }

    /// The class name and the values, as Realm prints a dynamic object.
    var description: String {
        let values = (isOld ? record.old : record.new).sorted { $0.key < $1.key }
        return "\(record.className) {\n" + values.map { "\t\($0.key) = \($0.value)" }.joined(separator: "\n") + "\n}"
    }
}
