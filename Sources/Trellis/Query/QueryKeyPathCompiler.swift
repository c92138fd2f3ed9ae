import Foundation

/// A key path resolved against the schema: how to read its values from a row, and what they are.
struct QueryOperand {
    let values: QueryValueSource
    /// The stored type of the values (`.int` for counts, `.object` for links).
    let type: PropertyType
    /// The class that declares the last property, and the property (for messages).
    let className: String
    let propertyName: String
    /// For links: the target class name.
    let objectClassName: String?
    /// Set when the values are one column of the row at a scope depth, with no hop: the
    /// compiler then tests the row bytes directly.
    var directColumn: (depth: Int, column: Int)? = nil
    /// Set when the key path itself says "every element" (`anyCol[*]`): a comparison without
    /// a quantifier then means `ANY`.
    var impliesAny = false
}

/// Resolves key paths (`dog.age`, `ANY dogs.name`, `owners.@count`, `map['k']`,
/// `@links.Person.dogs`) into value readers over rows, with Realm's errors for paths the
/// class does not have. Part of ``QueryCompiler``.
extension QueryCompiler {
    /// The scope depth and class a key path starts at: a subquery variable's element, else the
    /// innermost SUBQUERY's element, else the object being tested (depth 0).
    func origin(_ path: QueryKeyPath) throws(QueryError) -> (depth: Int, info: ClassInfo) {
        guard let variable = path.variable else { return innermostElement ?? (0, rootInfo) }
        guard let bound = variables[variable] else {
            throw QueryError(message: "Unknown variable '$\(variable)': variables are declared by SUBQUERY",
                             offset: nil)
        }
        return bound
    }

    /// Where a key path starts, as a row source.
    private func start(_ path: QueryKeyPath) throws(QueryError) -> (QueryRowSource, ClassInfo) {
        let (depth, info) = try origin(path)
        return (.single { $0[depth] }, info)
    }

    /// The objects a SUBQUERY's collection key path leads to.
    func objectRows(_ path: QueryKeyPath) throws(QueryError) -> (QueryRowSource, ClassInfo) {
        var (rows, info) = try start(path)
        for component in path.components {
            switch component {
            case .links(let className, let property):
                let (origin, field) = try linksOrigin(className, property, target: info, path)
                rows = expand(rows, backlinkExpansion(origin: origin, field: field))
                info = origin
            case .property(let name):
                let field = try self.field(name, in: info, path)
                if field.isLinkingObjects {
                    let (origin, originField) = try linkingObjectsOrigin(field, of: info, path)
                    rows = expand(rows, backlinkExpansion(origin: origin, field: originField))
                    info = origin
                } else if field.isLink, let target = resolver.targetClass(field) {
                    rows = field.typeInfo.collection == .none
                        ? linkRows(rows, field: field, target: target)
                        : expand(rows, collectionExpansion(field: field, target: target))
                    info = target
                } else {
                    throw invalid(path, "SUBQUERY needs a collection of objects; '\(info.className).\(name)' is not a link")
                }
            default:
                throw invalid(path, "SUBQUERY needs a key path to a collection of objects")
            }
        }
        guard rows.isMany else { throw invalid(path, "SUBQUERY needs a collection of objects, not a to-one link") }
        return (rows, info)
    }

    func operand(_ path: QueryKeyPath) throws(QueryError) -> QueryOperand {
        var (rows, info) = try start(path)
        let components = path.components
        if components.isEmpty {
            // `$x` alone: the element object itself.
            return QueryOperand(values: linkValues(rows), type: .object, className: info.className,
                                propertyName: "$\(path.variable ?? "")", objectClassName: info.className)
        }
        if components.count == 1, case .property(let name) = components[0],
           name.caseInsensitiveCompare("self") == .orderedSame, info.field(named: name) == nil
        {
            // `SELF IN %@`, `SELF == %@`: the object itself, as in Realm.
            return QueryOperand(values: linkValues(rows), type: .object, className: info.className,
                                propertyName: name, objectClassName: info.className)
        }
        var index = 0
        while index < components.count {
            let isLast = index == components.count - 1
            switch components[index] {
            case .links(let className, let property):
                let (origin, field) = try linksOrigin(className, property, target: info, path)
                let expansion = backlinkExpansion(origin: origin, field: field)
                if let terminal = try objectCollectionTerminal(Array(components[(index + 1)...]), expansion,
                                                               element: origin, owner: info, field: field,
                                                               rows: rows, path)
                { return terminal }
                rows = expand(rows, expansion)
                info = origin
            case .linksCount:
                guard isLast else { throw invalid(path, "@links.@count must appear at the end of a keypath") }
                let core = self.core
                return QueryOperand(values: perRow(rows) { row in
                    .int(Int64(core.backlinkCount(to: row.table, key: row.key)))
                }, type: .int, className: info.className, propertyName: "@links.@count", objectClassName: nil)
            case .operation(let op):
                throw invalid(path, "'\(op.rawValue)' must follow a collection property")
            case .mapKey, .allElements:
                throw invalid(path, "a subscript must follow a Map or AnyRealmValue property")
            case .property(let name):
                let field = try self.field(name, in: info, path)
                var rest = Array(components[(index + 1)...])
                if field.typeInfo.collection == .map, field.isLink, case .operation(.allValues)? = rest.first {
                    // `map.@allValues` of objects: the objects themselves.
                    rest.removeFirst()
                    index += 1
                }
                if field.isLinkingObjects {
                    let (origin, originField) = try linkingObjectsOrigin(field, of: info, path)
                    let expansion = backlinkExpansion(origin: origin, field: originField)
                    if let terminal = try objectCollectionTerminal(rest, expansion,
                                                                   count: backlinkCount(origin: origin, field: originField),
                                                                   element: origin, owner: info, field: field,
                                                                   rows: rows, path)
                    { return terminal }
                    rows = expand(rows, expansion)
                    info = origin
                } else if field.typeInfo.collection != .none {
                    if field.isLink, let target = resolver.targetClass(field) {
                        if case .mapKey(let key)? = rest.first {
                            guard rest.count == 1 else { throw invalid(path, "Cannot apply key path to Map subscripts.") }
                            return try mapValue(rows, field, info, key: key, path)
                        }
                        let expansion = collectionExpansion(field: field, target: target)
                        if let terminal = try objectCollectionTerminal(rest, expansion,
                                                                       count: storedObjectCount(field),
                                                                       element: target, owner: info, field: field,
                                                                       rows: rows, path)
                        { return terminal }
                        rows = expand(rows, expansion)
                        info = target
                    } else {
                        return try primitiveCollection(rows, field, info, rest, path)
                    }
                } else if field.isLink, let target = resolver.targetClass(field) {
                    if isLast {
                        return QueryOperand(values: columnValues(rows, field), type: .object,
                                            className: info.className, propertyName: name,
                                            objectClassName: target.className)
                    }
                    rows = linkRows(rows, field: field, target: target)
                    info = target
                } else if field.typeInfo.type == .any, !isLast {
                    return try nestedMixed(rows, field, info, Array(components[(index + 1)...]), path)
                } else {
                    guard isLast else {
                        throw invalid(path, "Property '\(info.className).\(name)' is not a link or collection and can "
                            + "only appear at the end of a keypath.")
                    }
                    var operand = QueryOperand(values: columnValues(rows, field), type: field.typeInfo.type,
                                               className: info.className, propertyName: name, objectClassName: nil)
                    if index == 0 { operand.directColumn = (try origin(path).depth, field.rowColumn) }
                    return operand
                }
            }
            index += 1
        }
        // The path ended on a collection of objects reached through `.property` steps only.
        return QueryOperand(values: linkValues(rows), type: .object, className: info.className,
                            propertyName: path.description, objectClassName: info.className)
    }

    // MARK: - Errors

    func invalid(_ path: QueryKeyPath, _ message: String) -> QueryError {
        QueryError(message: "Invalid keypath '\(path)': \(message)", offset: nil)
    }

    func field(_ name: String, in info: ClassInfo, _ path: QueryKeyPath) throws(QueryError) -> FieldInfo {
        if let field = info.field(named: name) { return field }
        var message = "No property '\(name)' on '\(info.className)'."
        if let nearest = QueryCompiler.nearest(to: name, among: info.fields.map(\.name)) {
            message += " Did you mean '\(nearest)'?"
        }
        throw QueryError(message: message, offset: nil)
    }

    /// The closest name by edit distance, if it is close enough to be a likely typo.
    static func nearest(to name: String, among names: [String]) -> String? {
        func distance(_ a: [Character], _ b: [Character]) -> Int {
            var previous = Array(0...b.count)
            for (i, ca) in a.enumerated() {
                var current = [i + 1]
                for (j, cb) in b.enumerated() {
                    current.append(Swift.min(previous[j + 1] + 1, current[j] + 1,
                                             previous[j] + (ca.lowercased() == cb.lowercased() ? 0 : 1)))
                }
                previous = current
            }
            return previous[b.count]
        }
        let scored = names.map { ($0, distance(Array(name), Array($0))) }.min { $0.1 < $1.1 }
        guard let (best, score) = scored, score <= Swift.max(2, name.count / 3) else { return nil }
        return best
    }

    /// The class and link property a LinkingObjects property is the inverse of.
    private func linkingObjectsOrigin(_ field: FieldInfo, of info: ClassInfo, _ path: QueryKeyPath) throws(QueryError)
        -> (ClassInfo, FieldInfo)
    {
        guard let origin = resolver.targetClass(field), let originName = field.originProperty else {
            throw invalid(path, "'\(info.className).\(field.name)' has no origin")
        }
        guard let originField = origin.field(named: originName) else {
            throw invalid(path, "'\(origin.className).\(originName)' does not exist")
        }
        return (origin, originField)
    }

    private func linksOrigin(_ className: String, _ property: String, target: ClassInfo,
                             _ path: QueryKeyPath) throws(QueryError) -> (ClassInfo, FieldInfo)
    {
        guard let origin = resolver.classNamed(className) else {
            throw invalid(path, "No class named '\(className)' in this Realm's schema")
        }
        let field = try self.field(property, in: origin, path)
        guard field.isLink, field.typeInfo.objectClassName == target.className else {
            throw invalid(path, "'\(className).\(property)' does not link to '\(target.className)'")
        }
        return (origin, field)
    }

    // MARK: - Row steps

    private func table(_ info: ClassInfo) -> Table? { resolver.table(info) }

    private func linkRows(_ rows: QueryRowSource, field: FieldInfo, target: ClassInfo) -> QueryRowSource {
        let column = field.rowColumn
        guard let targetTable = table(target) else { return rows.isMany ? .many { _, _ in false } : .single { _ in nil } }
        // One cursor per link step for the whole evaluation: consecutive rows usually link to
        // nearby targets, which LMDB then finds on the page the cursor is already on.
        guard let cursor = core.transaction.existingCursor(targetTable.rows) else {
            return rows.isMany ? .many { _, _ in false } : .single { _ in nil }
        }
        let follow = { (row: QueryRow) -> QueryRow? in
            guard !row.row.isNull(column) else { return nil }
            let key = row.row.slot(column)
            return cursor.value(forIntegerKey: key).map { QueryRow(table: targetTable, key: key, row: RowView(bytes: $0)) }
        }
        switch rows {
        case .single(let rowOf): return .single { scope in rowOf(scope).flatMap(follow) }
        case .many(let visitRows): return .many { scope, visit in visitRows(scope) { row in follow(row).map(visit) ?? false } }
        }
    }

    /// The encoded elements of a list, set or map (values) of `row`.
    private func elements(_ row: QueryRow, _ field: FieldInfo) -> [UnsafeRawBufferPointer] {
        let location = CollectionLocation(table: row.table, key: row.key, field: field)
        switch field.typeInfo.collection {
        case .list: return core.listElements(location)
        case .set: return core.setElements(location)
        case .map: return core.mapEntries(location).map(\.value)
        case .none: return []
        }
    }

    /// The number of elements of `field`'s collection in `row`, read from storage.
    private func storedCount(_ row: QueryRow, _ field: FieldInfo) -> Int {
        let location = CollectionLocation(table: row.table, key: row.key, field: field)
        switch field.typeInfo.collection {
        case .list: return core.listCount(location)
        case .set: return core.setCount(location)
        case .map: return core.mapCount(location)
        case .none: return 0
        }
    }

    /// Visits the rows one owner row leads to through a collection or backlinks; returns true
    /// when the visitor stopped early.
    typealias Expansion = (QueryRow, (QueryRow) -> Bool) -> Bool

    private func collectionExpansion(field: FieldInfo, target: ClassInfo) -> Expansion {
        guard let targetTable = table(target) else { return { _, _ in false } }
        let core = self.core
        return { [self] owner, visit in
            for element in elements(owner, field) {
                guard let key = CollectionElement.linkKey(element), let row = core.rowView(targetTable, key) else {
                    continue
                }
                if visit(QueryRow(table: targetTable, key: key, row: row)) { return true }
            }
            return false
        }
    }

    /// The number of rows ``backlinkExpansion(origin:field:)`` visits for a target: the sum of
    /// its backlink counts, read in place (no origin row is read, no entry copied).
    private func backlinkCount(origin: ClassInfo, field: FieldInfo) -> (QueryRow) -> Int {
        guard let originTable = table(origin) else { return { _ in 0 } }
        let core = self.core, column = field.rowColumn
        return { target in core.backlinkCount(to: target.table, key: target.key, from: originTable, column: column) }
    }

    /// The stored element count of a list or set of objects, which holds no nulls and whose
    /// targets exist (deleting an object removes it from every list and set); nil for maps, whose
    /// expansion skips the entries whose object was deleted.
    private func storedObjectCount(_ field: FieldInfo) -> ((QueryRow) -> Int)? {
        switch field.typeInfo.collection {
        case .list, .set: return { [self] in storedCount($0, field) }
        case .map, .none: return nil
        }
    }

    private func backlinkExpansion(origin: ClassInfo, field: FieldInfo) -> Expansion {
        guard let originTable = table(origin) else { return { _, _ in false } }
        let core = self.core
        return { target, visit in
            for (entry, count) in core.backlinks(to: target.table, key: target.key, from: originTable, column: field) {
                guard let row = core.rowView(originTable, entry.originKey) else { continue }
                let origin = QueryRow(table: originTable, key: entry.originKey, row: row)
                for _ in 0..<count where visit(origin) { return true }
            }
            return false
        }
    }

    private func expand(_ rows: QueryRowSource, _ expansion: @escaping Expansion) -> QueryRowSource {
        .many { scope, visit in rows.visit(scope) { owner in expansion(owner, visit) } }
    }

    // MARK: - Values

    /// One value per row.
    private func perRow(_ rows: QueryRowSource, _ read: @escaping (QueryRow) -> QueryValue) -> QueryValueSource {
        switch rows {
        case .single(let rowOf): return .single { scope in rowOf(scope).map(read) ?? .null }
        case .many(let visitRows): return .many { scope, visit in visitRows(scope) { visit(read($0)) } }
        }
    }

    private func columnValues(_ rows: QueryRowSource, _ field: FieldInfo) -> QueryValueSource {
        let column = field.rowColumn, type = field.typeInfo.type
        let linkTable = resolver.targetClass(field).flatMap(resolver.table)?.tableId ?? 0
        if case .single(let rowOf) = rows, type == .int {
            // The common scan: no closure between the row and the integer.
            return .single { scope in
                guard let row = rowOf(scope), !row.row.isNull(column) else { return .null }
                return .int(row.row.int(column))
            }
        }
        return perRow(rows) { QueryColumnReader.value($0.row, column, type, linkTable: linkTable) }
    }

    private func linkValues(_ rows: QueryRowSource) -> QueryValueSource {
        switch rows {
        case .single(let rowOf):
            return .single { scope in rowOf(scope).map { .link(tableId: $0.table.tableId, key: $0.key) } ?? .null }
        case .many(let visitRows):
            return .many { scope, visit in visitRows(scope) { visit(.link(tableId: $0.table.tableId, key: $0.key)) } }
        }
    }

    /// What follows a collection of objects: nothing (the objects), `@count`, or
    /// `@min/@max/@sum/@avg.property`; nil when the path goes on into the elements.
    /// `count`: the number of elements of one owner's collection read from storage (a list's
    /// header, a set's stored count, the backlink counts), when that is the number of rows its
    /// expansion visits; nil to count by visiting them.
    private func objectCollectionTerminal(_ rest: [QueryKeyPathComponent], _ expansion: @escaping Expansion,
                                          count storedCount: ((QueryRow) -> Int)? = nil,
                                          element: ClassInfo, owner: ClassInfo, field: FieldInfo,
                                          rows: QueryRowSource, _ path: QueryKeyPath) throws(QueryError) -> QueryOperand?
    {
        guard let next = rest.first else {
            return QueryOperand(values: linkValues(expand(rows, expansion)), type: .object, className: owner.className,
                                propertyName: field.name, objectClassName: element.className)
        }
        guard case .operation(let op) = next else { return nil }
        switch op {
        case .count, .size:
            guard rest.count == 1 else { throw invalid(path, "@count must appear at the end of a keypath") }
            if let storedCount {
                return QueryOperand(values: perRow(rows) { .int(Int64(storedCount($0))) }, type: .int,
                                    className: owner.className, propertyName: field.name, objectClassName: nil)
            }
            return QueryOperand(values: perRow(rows) { owner in
                var count = 0
                _ = expansion(owner) { _ in count += 1; return false }
                return .int(Int64(count))
            }, type: .int, className: owner.className, propertyName: field.name, objectClassName: nil)
        case .min, .max, .sum, .avg:
            guard rest.count == 2, case .property(let name) = rest[1] else {
                throw invalid(path, "\(op.rawValue) on a collection of objects must be followed by a property name")
            }
            let property = try self.field(name, in: element, path)
            guard property.typeInfo.collection == .none, [.int, .float, .double, .decimal128, .date].contains(property.typeInfo.type)
            else {
                throw invalid(path, "\(op.rawValue) can only be applied to a numeric property; "
                    + "'\(element.className).\(name)' is not one")
            }
            let column = property.rowColumn, type = property.typeInfo.type
            return QueryOperand(values: perRow(rows) { owner in
                var values = [QueryValue]()
                _ = expansion(owner) { row in
                    values.append(QueryColumnReader.value(row.row, column, type, linkTable: 0))
                    return false
                }
                return QueryAggregate.apply(op, values)
            }, type: op == .avg && type == .int ? .double : type, className: element.className, propertyName: name,
                objectClassName: nil)
        case .allKeys, .allValues:
            // A map of objects: its keys (strings), or its objects (`ANY pets.@allValues = %@`).
            guard field.typeInfo.collection == .map else {
                throw invalid(path, "\(op.rawValue) can only follow a Map property")
            }
            guard rest.count == 1 else { throw invalid(path, "\(op.rawValue) must appear at the end of a keypath") }
            if op == .allValues {
                return QueryOperand(values: linkValues(expand(rows, expansion)), type: .object,
                                    className: owner.className, propertyName: field.name,
                                    objectClassName: element.className)
            }
            let core = self.core
            let keys: QueryValueSource = .many { scope, visit in
                rows.visit(scope) { row in
                    core.mapEntries(CollectionLocation(table: row.table, key: row.key, field: field))
                        .contains { visit(.string($0.key)) }
                }
            }
            return QueryOperand(values: keys, type: .string, className: owner.className, propertyName: field.name,
                                objectClassName: nil)
        }
    }

    /// `map['key']`.
    private func mapValue(_ rows: QueryRowSource, _ field: FieldInfo, _ owner: ClassInfo, key: QueryExpression,
                          _ path: QueryKeyPath) throws(QueryError) -> QueryOperand
    {
        guard field.typeInfo.collection == .map else { throw invalid(path, "'\(field.name)' is not a Map") }
        let keyText: String
        switch key {
        case .constant(.string(let text)), .argument(.string(let text)): keyText = text
        default: throw invalid(path, "a map key must be a string")
        }
        let type = field.typeInfo.type, core = self.core
        let linkTable = resolver.targetClass(field).flatMap(resolver.table)?.tableId ?? 0
        return QueryOperand(values: perRow(rows) { row in
            let location = CollectionLocation(table: row.table, key: row.key, field: field)
            guard let element = core.mapValue(location, keyText) else { return .null }
            return QueryColumnReader.value(RowView(bytes: element), 0, type, linkTable: linkTable)
        }, type: type, className: owner.className, propertyName: field.name,
            objectClassName: field.typeInfo.objectClassName)
    }

    /// A list, set or map of values, and what follows it.
    private func primitiveCollection(_ rows: QueryRowSource, _ field: FieldInfo, _ owner: ClassInfo,
                                     _ rest: [QueryKeyPathComponent], _ path: QueryKeyPath) throws(QueryError)
        -> QueryOperand
    {
        let type = field.typeInfo.type
        let core = self.core
        var readKeys = false
        if case .mapKey(let key)? = rest.first {
            guard rest.count == 1 else { throw invalid(path, "Cannot apply key path to Map subscripts.") }
            return try mapValue(rows, field, owner, key: key, path)
        }
        var op: QueryCollectionOperation?
        if case .operation(let first)? = rest.first {
            guard rest.count == 1 else { throw invalid(path, "\(first.rawValue) must appear at the end of a keypath") }
            switch first {
            case .allKeys, .allValues:
                guard field.typeInfo.collection == .map else {
                    throw invalid(path, "\(first.rawValue) can only follow a Map property")
                }
                readKeys = first == .allKeys
            default: op = first
            }
        } else if !rest.isEmpty {
            throw invalid(path, "Property '\(owner.className).\(field.name)' is a collection of values; "
                + "only @count, @min, @max, @sum, @avg (and @allKeys, @allValues on maps) may follow it.")
        }
        let values: (QueryRow) -> [QueryValue] = { [self] row in
            if readKeys {
                return core.mapEntries(CollectionLocation(table: row.table, key: row.key, field: field))
                    .map { .string($0.key) }
            }
            return elements(row, field).map { QueryColumnReader.value(RowView(bytes: $0), 0, type, linkTable: 0) }
        }
        guard let op else {
            let source: QueryValueSource = .many { scope, visit in
                rows.visit(scope) { row in values(row).contains(where: visit) }
            }
            return QueryOperand(values: source, type: readKeys ? .string : type, className: owner.className,
                                propertyName: field.name, objectClassName: nil)
        }
        if op.isAggregate, ![.int, .float, .double, .decimal128, .date].contains(type) {
            throw invalid(path, "\(op.rawValue) can only be applied to a collection of numbers or dates")
        }
        let resultType: PropertyType = op == .count || op == .size ? .int : (op == .avg && type == .int ? .double : type)
        if op == .count || op == .size {
            // Every element counts (nulls too): the stored count, with nothing decoded.
            return QueryOperand(values: perRow(rows) { [self] row in .int(Int64(storedCount(row, field))) },
                                type: .int, className: owner.className, propertyName: field.name, objectClassName: nil)
        }
        return QueryOperand(values: perRow(rows) { row in
            let items = values(row)
            return op == .count || op == .size ? .int(Int64(items.count)) : QueryAggregate.apply(op, items)
        }, type: resultType, className: owner.className, propertyName: field.name, objectClassName: nil)
    }
}

/// `@min`, `@max`, `@sum`, `@avg` over query values, with realm-core's rules
/// (`aggregate_ops.hpp`): nil and NaN (Double, Float or Decimal128) values are skipped by every
/// aggregate, so `min`/`max` of `[1, NaN, 3]` are 1 and 3 and of `[NaN]` nil; an integer sum is
/// a 64-bit sum that wraps on overflow (realm-core adds into an `int64_t`: two `Int.max` sum to
/// -2); an average adds each value as a Double (Decimal128 as Decimal128), so the average of
/// two `Int.max` is `9.223372036854776e18`, not the wrapped sum halved.
enum QueryAggregate {
    static func apply(_ op: QueryCollectionOperation, _ values: [QueryValue]) -> QueryValue {
        let present = values.filter { !$0.isNull && !isNaN($0) }
        switch op {
        case .min, .max: return extremeIndex(op, values).map { values[$0] } ?? .null
        case .sum: return sum(present)
        case .avg:
            guard !present.isEmpty else { return .null }
            var double = 0.0, decimal = Decimal128(Decimal(0)), sawDecimal = false
            for value in present {
                switch value {
                case .int(let i): double += Double(i)
                case .double(let d): double += d
                case .decimal(let d): decimal += d; sawDecimal = true
                default: break
                }
            }
            let count = Double(present.count)
            if sawDecimal { return .decimal((decimal + Decimal128(Decimal(double))) / Decimal128(Decimal(present.count))) }
            return .double(double / count)
        default: return .null
        }
    }

    /// The position in `values` of the one `min` or `max` answers, nil when every value is nil
    /// or NaN (or `op` is neither). A collection of `AnyRealmValue` answers with that element
    /// itself, so a `.float` stays a `.float` (``QueryValue`` has no Float).
    static func extremeIndex(_ op: QueryCollectionOperation, _ values: [QueryValue]) -> Int? {
        let present = values.indices.filter { !values[$0].isNull && !isNaN(values[$0]) }
        let ordered = { (lhs: Int, rhs: Int) in QueryValueComparison.order(values[lhs], values[rhs]) ?? 0 < 0 }
        switch op {
        case .min: return present.min(by: ordered)
        case .max: return present.max(by: ordered)
        default: return nil
        }
    }

    /// For `min`/`max` of `AnyRealmValue`s asked as `AnyRealmValue`: the element itself.
    static func extremeElement<Element, T>(_ op: QueryCollectionOperation, of elements: [Element],
                                           _ values: [QueryValue]) -> T?
    {
        guard let index = extremeIndex(op, values) else { return nil }
        return elements[index] as? T
    }

    /// Whether an aggregate skips `value` as NaN (realm-core's `valid_for_agg`).
    static func isNaN(_ value: QueryValue) -> Bool {
        switch value {
        case .double(let d): d.isNaN
        case .decimal(let d): d.isNaN
        default: false
        }
    }

    private static func sum(_ values: [QueryValue]) -> QueryValue {
        var int: Int64 = 0, double = 0.0, decimal = Decimal128(Decimal(0))
        var sawDouble = false, sawDecimal = false
        for value in values {
            switch value {
            case .int(let i): int &+= i  // wraps, as realm-core's int64_t sum
            case .double(let d): double += d; sawDouble = true
            case .decimal(let d): decimal += d; sawDecimal = true
            default: break
            }
        }
        if sawDecimal { return .decimal(decimal + Decimal128(Decimal(int)) + Decimal128(Decimal(double))) }
        if sawDouble { return .double(double + Double(int)) }
        return .int(int)
    }
}
