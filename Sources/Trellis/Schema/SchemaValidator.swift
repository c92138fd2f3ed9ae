/// Checks a set of model classes against Realm's schema rules and reports every violation at
/// once, with Realm's wording.
///
/// Each rule is a small function that appends its findings; ``validate(_:)`` runs them all.
enum SchemaValidator {
    static func validate(_ classes: [ClassInfo], explicitList: Bool) -> [String] {
        var problems = [String]()
        let byName = Dictionary(classes.map { ($0.className, $0) }, uniquingKeysWith: { a, _ in a })
        for info in classes {
            for field in info.fields {
                checkOptionality(info, field, &problems)
                checkLinkingObjects(info, field, byName, &problems)
                checkEmbeddedInSet(info, field, &problems)
                checkPrimaryKeyType(info, field, &problems)
                checkIndexable(info, field, &problems)
                if explicitList { checkLinkTargetListed(info, field, byName, &problems) }
            }
            checkPrimaryKeyCount(info, &problems)
            checkEmbeddedHasNoPrimaryKey(info, &problems)
            checkColumnNames(info, &problems)
        }
        checkDuplicateNames(classes, &problems)
        return problems
    }

    static func checkOptionality(_ info: ClassInfo, _ field: FieldInfo, _ problems: inout [String]) {
        let type = field.typeInfo
        let target = type.objectClassName ?? "?"
        switch (type.collection, type.type) {
        case (.none, .object) where !type.isOptional:
            problems.append("Object property '\(field.name)' must be marked as optional.")
        case (.list, .object) where type.isOptional:
            problems.append("List<\(target)> property '\(field.name)' must not be marked as optional.")
        case (.set, .object) where type.isOptional:
            problems.append("MutableSet<\(target)> property '\(field.name)' must not be marked as optional.")
        case (.map, .object) where !type.isOptional:
            problems.append("Map<String, \(target)> property '\(field.name)' must be marked as optional.")
        case (.none, .any) where type.isOptional:
            problems.append("AnyRealmValue property '\(field.name)' must not be marked as optional: "
                + "nil values are represented as AnyRealmValue.none")
        default:
            break
        }
    }

    static func checkLinkingObjects(_ info: ClassInfo, _ field: FieldInfo, _ byName: [String: ClassInfo],
                                    _ problems: inout [String])
    {
        guard field.isLinkingObjects else { return }
        let originClass = field.typeInfo.objectClassName ?? "?"
        guard let origin = field.originProperty, !origin.isEmpty else {
            problems.append("LinkingObjects<\(originClass)> property '\(field.name)' must set the origin property "
                + "name with @Persisted(originProperty: \"name\").")
            return
        }
        let declared = "'\(info.className).\(field.name)'"
        let source = "Property '\(originClass).\(origin)' declared as origin of linking objects property \(declared)"
        guard let originInfo = byName[originClass], let originField = originInfo.field(named: origin),
              !originField.isLinkingObjects
        else {
            problems.append("\(source) does not exist")
            return
        }
        guard originField.isLink else {
            problems.append("\(source) is not a link")
            return
        }
        let linked = originField.typeInfo.objectClassName ?? "?"
        if linked != info.className {
            problems.append("\(source) links to type '\(linked)'")
        }
    }

    static func checkEmbeddedInSet(_ info: ClassInfo, _ field: FieldInfo, _ problems: inout [String]) {
        if field.typeInfo.collection == .set, field.isEmbeddedLink {
            problems.append("Set property '\(info.className).\(field.name)' cannot contain embedded object type "
                + "'\(field.typeInfo.objectClassName ?? "?")'. Set semantics are not applicable to embedded objects.")
        }
    }

    static func checkPrimaryKeyType(_ info: ClassInfo, _ field: FieldInfo, _ problems: inout [String]) {
        guard field.isPrimaryKey else { return }
        switch field.typeInfo.type {
        case .int, .string, .objectId, .UUID:
            if field.typeInfo.collection == .none { break }
            fallthrough
        default:
            problems.append("Property '\(info.className).\(field.name)' of type '\(field.typeInfo.type)' cannot be "
                + "made the primary key.")
        }
    }

    /// Realm indexes ints, bools, strings, object ids, UUIDs, dates and mixed values, never a
    /// collection; an `indexedProperties()` override may name anything else.
    static func checkIndexable(_ info: ClassInfo, _ field: FieldInfo, _ problems: inout [String]) {
        guard field.isIndexed, !field.isPrimaryKey else { return }
        let type = field.typeInfo
        let typeName: String
        switch type.collection {
        case .list: typeName = "array"
        case .set: typeName = "set"
        case .map: typeName = "dictionary"
        case .none:
            switch type.type {
            case .int, .bool, .string, .objectId, .UUID, .date, .any: return
            default: typeName = type.type.description
            }
        }
        problems.append("Property '\(info.className).\(field.name)' of type '\(typeName)' cannot be indexed.")
    }

    static func checkLinkTargetListed(_ info: ClassInfo, _ field: FieldInfo, _ byName: [String: ClassInfo],
                                      _ problems: inout [String])
    {
        guard let target = field.typeInfo.objectClassName, byName[target] == nil else { return }
        problems.append("Invalid class subset list:\n- '\(info.className).\(field.name)' links to class '\(target)', "
            + "which is missing from the list of classes managed by the Realm")
    }

    static func checkPrimaryKeyCount(_ info: ClassInfo, _ problems: inout [String]) {
        let keys = info.fields.filter(\.isPrimaryKey)
        if keys.count > 1 {
            problems.append("Properties '\(keys[1].name)' and '\(keys[0].name)' are both marked as the primary key "
                + "of '\(info.className)'")
        }
    }

    static func checkEmbeddedHasNoPrimaryKey(_ info: ClassInfo, _ problems: inout [String]) {
        if info.isEmbedded, info.primaryKeyField != nil {
            problems.append("Embedded object type '\(info.className)' cannot have a primary key.")
        }
    }

    /// Two properties may not be stored under one name (``ObjectBase/propertiesMapping()``).
    static func checkColumnNames(_ info: ClassInfo, _ problems: inout [String]) {
        var byColumn = [String: String]()
        for field in info.fields {
            if let other = byColumn[field.columnName] {
                problems.append("Properties '\(info.className).\(other)' and '\(info.className).\(field.name)' are both "
                    + "stored as '\(field.columnName)': give them distinct names in propertiesMapping().")
            } else {
                byColumn[field.columnName] = field.name
            }
        }
    }

    static func checkDuplicateNames(_ classes: [ClassInfo], _ problems: inout [String]) {
        var seen = Set<String>()
        for info in classes where !seen.insert(info.className).inserted {
            problems.append("Class '\(info.className)' is listed twice: two model classes have the same name. "
                + "Rename one of them.")
        }
    }

    /// The error for a list of problems, in Realm's format.
    static func error(for problems: [String]) -> Realm.Error {
        Realm.Error(.invalidSchema, "Schema validation failed due to the following errors:\n"
            + problems.map { "- \($0)" }.joined(separator: "\n"))
    }
}
