/// Makes the accessors of a List of objects while it is iterated, without generic code: the
/// generic decode of an element looks up `Optional<Element>` metadata per element, and each
/// element gets a new accessor. Here the target table is found once, the row is read with the
/// reused cursor (a list's elements are often consecutive keys), and the accessor handed out
/// last is pointed at the next row when nothing else can see it (as `Results` iteration does,
/// see ``RealmCore/accessor(reusing:_:table:key:)``).
struct ListObjectReader {
    private let type: ObjectBase.Type
    private let table: Table
    private let reusesAccessors: Bool
    /// The accessor handed out last, while `reusesAccessors`.
    private var handedOut: ObjectBase?
    /// Where the list keeps it between iterations, so that its next iteration (or that of the
    /// next owner's list, when the list accessor is pointed at it) starts with it instead of a
    /// new one: taken when the iteration begins, given back when it reaches the end.
    private let spare: SpareAccessor

    /// A reader for the elements of `binding`'s list, or nil when its elements are not objects
    /// of a class with a table (values, DynamicObjects, a class not stored yet: the generic path).
    init?<Element>(_ binding: CollectionBinding, elementType _: Element.Type, spare: () -> SpareAccessor) {
        guard binding.location.field.typeInfo.type == .object, let type = Element.self as? ObjectBase.Type,
              type != DynamicObject.self, let table = binding.core.table(for: type, create: false)
        else { return nil }
        // Asked before `table` is stored: afterwards the table would be retained once more for
        // the question (its answer is an atomic load the compiler does not move).
        reusesAccessors = binding.core.reusesAccessors(of: table)
        self.type = type
        self.table = table
        self.spare = spare()
        if reusesAccessors {
            handedOut = self.spare.accessor
            self.spare.accessor = nil
        }
    }

    /// Gives the accessor handed out last back to the list, at the end of an iteration.
    mutating func finish() {
        guard let object = handedOut else { return }
        handedOut = nil
        spare.accessor = object
    }

    /// The accessor of the object `key` designates.
    mutating func accessor(_ core: RealmCore, key: ObjectKey) -> ObjectBase {
        let rows = table.rows
        guard let bytes = core.withTransaction({ $0.get(rows, nearIntegerKey: key) }) else {
            // A missing row (only a damaged file links to one): see MissingLinkTarget.
            return MissingLinkTarget.placeholder(type, core: core, key: key)
        }
        let object: ObjectBase
        if reusesAccessors {
            object = core.accessor(reusing: &handedOut, type, table: table, key: key)
            handedOut = object
        } else {
            object = core.accessor(type, table: table, key: key)
        }
        object._rowCache = RowCache(stamp: core.changeStamp, bytes: bytes)
        return object
    }
}

/// The element accessor a list's last iteration handed out (``ListObjectReader``), an object of
/// the list's element class: the list keeps it, also when it is pointed at another owner's list
/// (see ``List/_trellisRepointAccessor(at:to:_:)``).
final class SpareAccessor {
    // Unchecked: a list is iterated on its Realm's thread.
    @exclusivity(unchecked) var accessor: ObjectBase?
}

/// The objects of a list of objects as it was when iteration began: its elements' keys, copied
/// then (so that the loop body may change the list), made into accessors one at a time by a
/// ``ListObjectReader``. Not generic, so that `List.Iterator`'s inlined `next()` only casts.
/// Not API.
public struct _ListObjectWalk {
    let core: RealmCore
    let keys: [ObjectKey]
    var reader: ListObjectReader
    var position = 0

    /// `keys`: the list's elements' keys (``RealmCore/listLinkKeys(_:)``: a list of objects
    /// holds no null element; one in a damaged file reads as a missing row, so the walk gives
    /// as many objects as the list's count).
    init(core: RealmCore, keys: [ObjectKey], reader: ListObjectReader) {
        self.core = core
        self.keys = keys
        self.reader = reader
    }

    /// The next object; nil at the end.
    @usableFromInline
    mutating func next() -> ObjectBase? {
        guard position < keys.count else {
            reader.finish()
            return nil
        }
        position += 1
        return reader.accessor(core, key: keys[position - 1])
    }
}
