/// How the query compiler finds the classes and tables a key path leads to.
///
/// Queries on ``Results`` find them by model type. Queries on a file without its model classes
/// (``StoredSchemaQuery``) find them by the class names of the schema stored in the file.
struct QueryClassResolver {
    /// The class a link leads to, or a LinkingObjects property's origin class.
    let targetClass: (FieldInfo) -> ClassInfo?
    /// A class of the schema by name (`@links.Class.property`).
    let classNamed: (String) -> ClassInfo?
    /// A class's table in the current snapshot; nil when it has none yet.
    let table: (ClassInfo) -> Table?

    /// Classes by model type, tables from `core`; classes of ``DynamicObject``s (which have no
    /// model type) by name.
    static func models(_ core: RealmCore) -> QueryClassResolver {
        QueryClassResolver(
            targetClass: { [unowned core] field in
                if let type = field.typeInfo.objectType { return ClassInfo.unbound(for: type) }
                return field.typeInfo.storedTargetName.flatMap(core.dynamicClassInfo(named:))
            },
            classNamed: { [unowned core] name in ClassInfo.known(named: name) ?? core.dynamicClassInfo(named: name) },
            table: { [unowned core] info in
                if info.objectType == DynamicObject.self { return core.dynamicTable(named: info.className, create: false) }
                return core.table(for: info.objectType, create: false)
            })
    }
}
