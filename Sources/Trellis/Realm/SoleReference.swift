/// Whether an accessor that an iteration (or a link hop) handed out last is referenced by
/// nothing but the caller, so that it may be pointed at the next row unseen.
///
/// The full test asks the Swift runtime three questions: is the strong reference unique, and
/// are there no weak and no unowned ones (`isKnownUniquelyReferenced`, `_getWeakRetainCount`,
/// `_getUnownedRetainCount`): three calls, about 45 instructions, made for every object an
/// iteration hands out. The answer is written in the object's reference-count word, which the
/// runtime keeps in the object's header: the strong and unowned counts inline, or, once a weak
/// reference was ever made, a pointer to a side table, with the top bit set. So once the full
/// test has said yes for an object whose word is inline, any object whose word is that same
/// value has the same counts and no side table: the same yes, for one load and one compare.
///
/// That reading of the word is checked once per process (``layoutIsAsExpected``) on a probe
/// object: a strong, an unowned and a weak reference must each change its word, the weak one
/// to the side-table form. If the runtime keeps its counts otherwise, only the full test runs.
struct SoleReference {
    /// A word the full test accepted (inline form); zero until then.
    private var accepted: UInt = 0
    /// A word the full test accepted for ``holds(kept:)``; zero until then.
    private var acceptedKept: UInt = 0

    /// Whether the caller's reference to `object` is its only one.
    @inline(__always)
    mutating func holds(_ object: inout ObjectBase) -> Bool {
        let word = Self.countWord(object)
        if word == accepted, word != 0 { return true }
        guard Self.isOnlyReference(&object) else { return false }
        if Self.layoutIsAsExpected, word & Self.sideTableBit == 0 { accepted = word }
        return true
    }

    /// As ``holds(_:)``, for an object the caller keeps through one retained `Unmanaged`
    /// reference: whether that is its only one. No retain or release when the word was accepted.
    /// The word is read in place, with no reference made for the read, and compared with a word
    /// accepted the same way (``holds(_:)``'s may count a reference its read made).
    @inline(__always)
    mutating func holds(kept object: Unmanaged<ObjectBase>) -> Bool {
        let word = UnsafeRawPointer(object.toOpaque())
            .load(fromByteOffset: MemoryLayout<UnsafeRawPointer>.size, as: UInt.self)
        if word == acceptedKept, word != 0 { return true }
        // The kept reference, moved into a strong one for the full test, then kept again.
        var strong = object.takeRetainedValue()
        defer { _ = Unmanaged.passRetained(strong) }
        guard Self.isOnlyReference(&strong) else { return false }
        if Self.layoutIsAsExpected, word & Self.sideTableBit == 0 { acceptedKept = word }
        return true
    }

    /// The full test: whether `object`, held by the caller, has no other strong, weak or unowned
    /// reference (the runtime's counts include one implicit weak and unowned reference each).
    @inline(__always)
    static func isOnlyReference<Object: AnyObject>(_ object: inout Object) -> Bool {
        isKnownUniquelyReferenced(&object) && _getWeakRetainCount(object) <= 1 && _getUnownedRetainCount(object) <= 1
    }

    /// Set in the word when the counts live in a side table (Swift's `UseSlowRC` bit).
    private static let sideTableBit: UInt = 1 << (UInt.bitWidth - 1)

    /// The reference-count word, which follows the type pointer in an object's header.
    @inline(__always)
    private static func countWord<Object: AnyObject>(_ object: Object) -> UInt {
        UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
            .load(fromByteOffset: MemoryLayout<UnsafeRawPointer>.size, as: UInt.self)
    }

    /// Whether the runtime keeps counts as described above (checked once, on a probe object).
    static let layoutIsAsExpected: Bool = checkLayout()

    /// Unoptimized, so that every reference it makes is really made.
    @_optimize(none)
    private static func checkLayout() -> Bool {
        guard UInt.bitWidth == 64 else { return false }
        let holder = SoleReferenceProbe()
        let probe: AnyObject = SoleReferenceProbe()
        guard countWord(probe) & sideTableBit == 0, let target = probe as? SoleReferenceProbe else { return false }
        // `target` is a second strong reference: each change below is against this word.
        let base = countWord(probe)
        holder.strongPeer = target
        let withStrong = countWord(probe)
        holder.strongPeer = nil
        holder.unownedPeer = target
        let withUnowned = countWord(probe)
        holder.unownedPeer = nil
        holder.weakPeer = target
        let withWeak = countWord(probe)
        holder.weakPeer = nil
        return base & sideTableBit == 0
            && withStrong != base && withStrong & sideTableBit == 0
            && withUnowned != base && withUnowned & sideTableBit == 0
            && withWeak & sideTableBit != 0
    }
}

/// The objects ``SoleReference/layoutIsAsExpected`` makes references between.
private final class SoleReferenceProbe {
    var strongPeer: SoleReferenceProbe?
    unowned var unownedPeer: SoleReferenceProbe?
    weak var weakPeer: SoleReferenceProbe?
}
