import Foundation

/// Every model class of the running program, for the default schema (a Realm opened without
/// `objectTypes`), as Realm has it.
///
/// Realm lists the program's classes with the Objective-C runtime (`objc_copyClassList`) and
/// keeps the subclasses of its object classes. Linux has no Objective-C runtime; what it has is
/// the table of type records the Swift compiler puts in every image (the `swift5_types`
/// section), which the Swift runtime hands out through `swift_enumerateAllMetadataSections`
/// (the way swift-testing finds tests on Linux). Apple platforms' images hold the same table
/// in their `__TEXT,__swift5_types` section, read through dyld (``MachOTypeRecords``). Each record leads to a type descriptor; the
/// non-generic class descriptors give their class through their metadata accessor, and the
/// subclasses of ``ObjectBase`` are the model classes.
///
/// Limits, each documented in docs/PORTING.md:
/// - a generic model class (`GenericHolder<T>`) is not one class: each specialization joins
///   the schema when first used, as before;
/// - images loaded with `dlopen` after the first lookup are not seen;
/// - a name two classes share (a program Realm would refuse: "RLMObject subclasses with the
///   same name cannot be included twice") names neither here.
enum ProgramModelClasses {
    /// The model classes, in image and record order; found on first use.
    static var all: [ObjectBase.Type] { found.classes }

    /// The model class with this schema name (``ObjectBase/className()``), when exactly one has it.
    static func modelClass(named className: String) -> ObjectBase.Type? { found.byName[className] }

    /// The schema of each class ``modelClass(named:)`` finds and the default schema includes
    /// (``ObjectBase/shouldIncludeInDefaultSchema()``), made once.
    static var objectSchemas: [ObjectSchema] { schemas }

    private static let schemas: [ObjectSchema] = found.byName.values.filter { $0.shouldIncludeInDefaultSchema() }
        .map { ClassInfo.unbound(for: $0).objectSchema }

    private struct Found: @unchecked Sendable {
        // @unchecked Sendable: class metatypes, immutable once found.
        let classes: [ObjectBase.Type]
        let byName: [String: ObjectBase.Type]
    }

    private static let found: Found = {
        let baseClasses: [ObjectIdentifier] = [ObjectBase.self, Object.self, EmbeddedObject.self, DynamicObject.self]
            .map(ObjectIdentifier.init)
        let classes = TypeRecords.classes().compactMap { $0 as? ObjectBase.Type }
            .filter { !baseClasses.contains(ObjectIdentifier($0)) }
        var byName = [String: ObjectBase.Type]()
        var shared = Set<String>()
        for type in classes {
            let name = type.className()
            if byName.updateValue(type, forKey: name) != nil { shared.insert(name) }
        }
        for name in shared { byName[name] = nil }
        return Found(classes: classes, byName: byName)
    }()
}

/// Reads the Swift type records of the loaded images (see ``ProgramModelClasses``).
private enum TypeRecords {
    /// `swift_enumerateAllMetadataSections(body, context)`, a C function of the Swift runtime
    /// on ELF platforms; nil where the runtime has none.
    private typealias Enumerate = @convention(c) (
        @convention(c) (UnsafeRawPointer?, UnsafeMutableRawPointer?) -> Bool, UnsafeMutableRawPointer?
    ) -> Void

    /// A type descriptor's metadata accessor, called with a metadata request (0: complete).
    /// Its Swift calling convention passes the request and returns the metadata in the first
    /// argument and result registers, as C does on the platforms Trellis runs on.
    private typealias MetadataAccessor = @convention(c) (Int) -> UnsafeRawPointer?

    /// The non-generic classes of every loaded image.
    static func classes() -> [Any.Type] {
        var result = [Any.Type]()
        for range in typeRecordRanges() {
            let count = range.count / 4
            for index in 0..<count {
                let record = range.start + index * 4
                guard let descriptor = descriptor(of: record), let type = nonGenericClass(descriptor) else { continue }
                result.append(type)
            }
        }
        return result
    }

    /// The (start, byte count) of each image's type record table, copied out first: the
    /// runtime holds its image list's lock while it calls the enumeration's body. Apple
    /// platforms' runtime has no such function: there the tables are read from the images'
    /// Mach-O sections (``MachOTypeRecords``).
    private static func typeRecordRanges() -> [TypeRecordRanges.Range] {
        #if canImport(Darwin)
        return MachOTypeRecords.ranges()
        #else
        return enumeratedTypeRecordRanges()
        #endif
    }

    /// The type record tables the runtime's `swift_enumerateAllMetadataSections` hands out (ELF
    /// and COFF platforms); none where the runtime lacks it.
    private static func enumeratedTypeRecordRanges() -> [TypeRecordRanges.Range] {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "swift_enumerateAllMetadataSections")
        else { return [] }
        let enumerate = unsafeBitCast(symbol, to: Enumerate.self)
        let collected = TypeRecordRanges()
        withExtendedLifetime(collected) {
            enumerate(collectTypeRecordRange, Unmanaged.passUnretained(collected).toOpaque())
        }
        return collected.ranges
    }

    /// The type descriptor a record points at: directly (kind 0) or through a pointer (kind 1);
    /// nil for Objective-C references (kinds 2, 3), which name Objective-C classes (Darwin
    /// images only), never a model class.
    private static func descriptor(of record: UnsafeRawPointer) -> UnsafeRawPointer? {
        let raw = record.load(as: Int32.self)
        let offset = Int(raw & ~3)
        if offset == 0 { return nil }
        switch raw & 3 {
        case 0: return record + offset
        case 1: return (record + offset).load(as: UnsafeRawPointer?.self)
        default: return nil
        }
    }

    /// The class of a non-generic, native Swift class descriptor that has a superclass, from
    /// its metadata accessor; nil for anything else, which is never called.
    ///
    /// A context descriptor starts with its flags: the kind in bits 0-4 (16: class), generic
    /// in bit 7, and the kind's own flags in bits 16-31, whose low two bits say how the
    /// metadata is initialized (2: foreign, an imported C type such as Foundation's `CFString`
    /// on Linux, whose metadata is no Swift class: casting it to a class type reads past it).
    /// Then come four relative fields (parent, name, accessor, fields) and, for a class, its
    /// superclass's mangled name (zero for a root class, which cannot be a model class).
    private static func nonGenericClass(_ descriptor: UnsafeRawPointer) -> Any.Type? {
        let flags = descriptor.load(as: UInt32.self)
        let classKind: UInt32 = 16, isGeneric: UInt32 = 0x80, foreignInitialization: UInt32 = 2
        guard flags & 0x1F == classKind, flags & isGeneric == 0,
              (flags >> 16) & 0x3 != foreignInitialization
        else { return nil }
        let superclassField = descriptor + 20
        if superclassField.load(as: Int32.self) == 0 { return nil }
        let accessorField = descriptor + 12
        let offset = Int(accessorField.load(as: Int32.self))
        if offset == 0 { return nil }
        let accessor = unsafeBitCast(accessorField + offset, to: MetadataAccessor.self)
        guard let metadata = accessor(0) else { return nil }
        return unsafeBitCast(metadata, to: Any.Type.self)
    }
}

/// The type record tables found so far (the context of ``collectTypeRecordRange``).
final class TypeRecordRanges {
    typealias Range = (start: UnsafeRawPointer, count: Int)
    var ranges: [Range] = []

    /// Where `swift5_type_metadata` is described in the runtime's `MetadataSections`: after
    /// version, base address and two unused words, and two (start, length) ranges.
    static let offsetInSections = 4 * MemoryLayout<UInt>.size + 2 * 2 * MemoryLayout<UInt>.size
}

/// The body of `swift_enumerateAllMetadataSections`: notes one image's type record table.
private func collectTypeRecordRange(_ sections: UnsafeRawPointer?, _ context: UnsafeMutableRawPointer?) -> Bool {
    guard let sections, let context else { return true }
    let offset = TypeRecordRanges.offsetInSections
    let start = sections.load(fromByteOffset: offset, as: UInt.self)
    let length = sections.load(fromByteOffset: offset + MemoryLayout<UInt>.size, as: Int.self)
    if let base = UnsafeRawPointer(bitPattern: start), length > 0 {
        Unmanaged<TypeRecordRanges>.fromOpaque(context).takeUnretainedValue().ranges.append((base, length))
    }
    return true
}
