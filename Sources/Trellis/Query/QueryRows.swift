import Foundation

/// A row being evaluated: its table, key and bytes (valid in the current snapshot).
struct QueryRow {
    /// Unowned: the compiled query and the Results being evaluated keep their tables alive,
    /// and skipping reference counting here is most of what a scan costs per row.
    unowned(unsafe) let table: Table
    let key: ObjectKey
    let row: RowView
}

/// The rows a query is looking at: the object being tested (depth 0) and the element of each
/// enclosing `SUBQUERY` (depth 1, 2, …). One scope serves a whole evaluation.
final class QueryScope {
    private let storage: UnsafeMutablePointer<QueryRow?>
    private let capacity: Int

    init(depth: Int) {
        capacity = depth + 1
        storage = .allocate(capacity: capacity)
        storage.initialize(repeating: nil, count: capacity)
    }

    deinit {
        storage.deinitialize(count: capacity)
        storage.deallocate()
    }

    /// The row at `depth` (0: the object being tested).
    @inline(__always)
    subscript(depth: Int) -> QueryRow? {
        get { storage[depth] }
        set { storage[depth] = newValue }
    }
}

/// Where the rows of a key path step come from: at most one row per object (to-one links), or
/// any number (collections, LinkingObjects), visited until the visitor says stop.
enum QueryRowSource {
    case single((QueryScope) -> QueryRow?)
    /// Calls the visitor for each row; returns true when the visitor stopped early.
    case many((QueryScope, (QueryRow) -> Bool) -> Bool)

    var isMany: Bool { if case .many = self { true } else { false } }

    /// Visits every row (for a single source: the one row, if any).
    func visit(_ scope: QueryScope, _ visitor: (QueryRow) -> Bool) -> Bool {
        switch self {
        case .single(let row): row(scope).map(visitor) ?? false
        case .many(let rows): rows(scope, visitor)
        }
    }
}

/// The values a key path reads: one per object, or many (crossing a collection).
enum QueryValueSource {
    case single((QueryScope) -> QueryValue)
    /// Calls the visitor for each value; returns true when the visitor stopped early.
    case many((QueryScope, (QueryValue) -> Bool) -> Bool)

    var isMany: Bool { if case .many = self { true } else { false } }

    func visit(_ scope: QueryScope, _ visitor: (QueryValue) -> Bool) -> Bool {
        switch self {
        case .single(let value): visitor(value(scope))
        case .many(let values): values(scope, visitor)
        }
    }
}

/// Decodes one column of a row (or a collection element, a one-column row) as a query value.
enum QueryColumnReader {
    static func value(_ row: RowView, _ column: Int, _ type: PropertyType, linkTable: UInt32) -> QueryValue {
        if row.isNull(column) { return .null }
        switch type {
        case .int: return .int(row.int(column))
        case .bool: return .bool(row.bool(column))
        case .float: return .double(Double(row.float(column)))
        case .double: return .double(row.double(column))
        case .string: return .string(row.string(column))
        case .data: return .data(row.data(column))
        case .date: return .date(row.date(column))
        case .objectId: return .objectId(row.objectId(column))
        case .UUID: return .uuid(row.uuid(column))
        case .decimal128: return .decimal(row.decimal(column))
        case .object: return .link(tableId: linkTable, key: row.slot(column))
        case .any: return row.mixed(column).map(mixed) ?? .null
        case .linkingObjects: return .null
        }
    }

    static func mixed(_ value: MixedValue) -> QueryValue {
        switch value {
        case .int(let i): .int(i)
        case .bool(let b): .bool(b)
        case .float(let f): .double(Double(f))
        case .double(let d): .double(d)
        case .date(let d): .date(d)
        case .string(let s): .string(s)
        case .data(let d): .data(d)
        case .objectId(let o): .objectId(o)
        case .decimal(let d): .decimal(d)
        case .uuid(let u): .uuid(u)
        case .link(let tableId, let key): .link(tableId: tableId, key: key)
        case .list: .nestedCollection(.list)
        case .dictionary: .nestedCollection(.dictionary)
        }
    }
}
