import Synchronization

/// What a link to a row that is not in the file reads as. Only a damaged file has one: Trellis
/// removes a deleted object from every list, set and map and nils every to-one link to it.
///
/// A list or set element reads as a new *unmanaged* object of the target class holding its
/// default values (its `realm` is nil), typed (`List<Dog>`) or dynamic (`List<DynamicObject>`,
/// whose placeholder has the class's schema, so reading any of its properties gives the
/// property's default); a map value and a to-one link read as nil, as Realm reads a link to a
/// deleted object. The collection keeps its count, so `count`, iteration and indexes agree and
/// stay O(1) per element. (realm-core hides links it knows to be unresolved from the collection:
/// it marks them in the link itself. Trellis's links carry no such mark, so hiding them would
/// look every element's target up for `count`, `first` or `list[i]`.)
///
/// The first such read of a file is logged at the error level, naming the file and the link:
/// the values it gives are not data of the file.
enum MissingLinkTarget {
    /// The files whose damage was logged (once per file and process).
    private static let reported = Mutex<Set<String>>([])

    /// Logs, once per file, that `className` object `key` is missing.
    static func report(_ core: RealmCore, className: String, key: ObjectKey) {
        let path = core.environmentPath
        guard reported.withLock({ $0.insert(path).inserted }) else { return }
        Logger.log(.error, Category.Storage.all, "'\(path)' is damaged: a link to \(className) object \(key) finds no "
            + "such object. List and set elements linking to missing objects read as new unmanaged objects of default "
            + "values, map values and to-one links as nil; Realm._consistencyProblems() lists them. Restore the file "
            + "from a backup, or export what reads and import it into a new file.")
    }

    /// The element a list or set of `type` reads for a link to a missing row: a new unmanaged
    /// object of `type` (the class the metatype is, which may be a subclass of `T`).
    static func placeholder<T: ObjectBase>(_ type: T.Type, core: RealmCore, key: ObjectKey) -> T {
        report(core, className: type.className(), key: key)
        return type.init()
    }

    /// The element a `List<DynamicObject>` or `MutableSet<DynamicObject>` reads for a link to a
    /// missing row (or a null element, which a list of objects never holds): an unmanaged
    /// ``DynamicObject`` with the schema of `info`, reading each property's default.
    static func dynamicPlaceholder(_ info: ClassInfo, core: RealmCore, key: ObjectKey) -> DynamicObject {
        report(core, className: info.className, key: key)
        let object = DynamicObject()
        object.missingTarget = MissingTargetValues(info: info)
        return object
    }
}

/// The values of a ``DynamicObject`` standing for a missing link target (see
/// ``MissingLinkTarget``): each property's default until it is set.
final class MissingTargetValues {
    let info: ClassInfo
    private var values: [String: Any?] = [:]

    init(info: ClassInfo) {
        self.info = info
    }

    private func field(_ name: String) -> FieldInfo {
        guard let field = info.field(named: name) else {
            throwRealmException("Invalid property name '\(name)' for class '\(info.className)'.")
        }
        return field
    }

    func value(_ name: String) -> Any? {
        let field = field(name)
        if let value = values[name] { return value }
        return (field.witness as? any DynamicDefaultValue.Type)?.defaultValue(field) ?? nil
    }

    func set(_ name: String, _ value: Any?) {
        _ = field(name)
        values[name] = .some(value)
    }

    var description: String {
        let body = info.storedFields.map { "\t\($0.name) = \(value($0.name).map { "\($0)" } ?? "nil")" }
        return "\(info.className) {\n\(body.joined(separator: "\n"))\n}"
    }
}
