import Foundation
import Synchronization

/// Collects the names of the persisted properties read on recording prototypes (see
/// ``QueryKeyPathNames``).
///
/// A key path may go on through a collection of objects (`\Person.dogs[0].name`,
/// `\Dog.owners[0].name`, `\Person.pets[""]??.name`), as Realm's key-path recording allows: the
/// prototype's collection is empty and unmanaged, so while a key path is read (``reading(_:)``)
/// its subscript hands out a recording prototype of the element type instead of trapping
/// (``element(_:)``).
final class KeyPathRecorder {
    var names: [String] = []
    /// The recording prototype of the elements of the last collection of objects recorded.
    private var pendingElement: ObjectBase?

    /// Records the property behind `storageKeyPath` and returns what the read should give: for
    /// a to-one link, a recording prototype of the target so that a chain can go on.
    func record<Value>(_ object: ObjectBase, _ field: FieldInfo, unmanaged: Value) -> Value {
        names.append(field.name)
        if let target = field.typeInfo.objectType, field.isLink || field.typeInfo.type == .linkingObjects {
            let prototype = target.init()
            prototype._record(with: self)
            if field.typeInfo.collection == .none, let value = prototype as? Value { return value }
            pendingElement = prototype
        }
        return unmanaged
    }

    // MARK: - Collections on the way

    private static let threadKey = "Trellis.KeyPathRecorder"
    /// How many threads are reading a key path: the subscripts look for a recorder only then.
    private static let readers = Atomic<Int>(0)

    /// Runs `read` (a key path read on a recording prototype) with this recorder active on the
    /// calling thread.
    func reading<T>(_ read: () -> T) -> T {
        let dictionary = Thread.current.threadDictionary
        let outer = dictionary[Self.threadKey]
        dictionary[Self.threadKey] = self
        Self.readers.add(1, ordering: .relaxed)
        defer {
            Self.readers.subtract(1, ordering: .relaxed)
            dictionary[Self.threadKey] = outer
        }
        return read()
    }

    /// The recording prototype an empty collection's subscript gives while a key path is read
    /// on this thread; nil otherwise (the subscript then traps or answers nil as usual).
    static func element<Element>(_: Element.Type) -> Element? {
        guard readers.load(ordering: .relaxed) > 0,
              let recorder = Thread.current.threadDictionary[threadKey] as? KeyPathRecorder,
              let element = recorder.pendingElement as? Element
        else { return nil }
        recorder.pendingElement = nil
        return element
    }
}
