#if canImport(Darwin)
import Darwin
import MachO

/// The Swift type record tables of the program's own images on Apple platforms, for
/// ``ProgramModelClasses`` (the default schema).
///
/// The Swift runtime there has no `swift_enumerateAllMetadataSections`; each image instead holds
/// its records in the Mach-O section `__TEXT,__swift5_types`, in the same format as the ELF
/// `swift5_type_metadata` table, and dyld lists the loaded images and finds their sections.
/// Images of the operating system (its frameworks and libraries, under `/System/Library/` and
/// `/usr/lib/`, also inside a simulator's runtime root) hold no model class and are skipped:
/// they are most of the images, and reading their classes would realize thousands of them.
///
/// Written and reviewed for Darwin, not compiled on this project's Linux machines
/// (docs/ARCHITECTURE.md, "Platforms").
enum MachOTypeRecords {
    #if arch(arm64_32)
    /// watchOS's `arm64_32` images have 32-bit headers, and `getsectiondata` takes them.
    private typealias ImageHeader = mach_header
    #else
    private typealias ImageHeader = mach_header_64
    #endif

    /// The (start, byte count) of the type record table of each loaded image of the program.
    static func ranges() -> [TypeRecordRanges.Range] {
        var ranges: [TypeRecordRanges.Range] = []
        // An image loaded meanwhile may be missed; one unloaded gives a nil header.
        for index in 0..<_dyld_image_count() {
            guard let header = _dyld_get_image_header(index) else { continue }
            if let name = _dyld_get_image_name(index), isSystemImage(String(cString: name)) { continue }
            var size: UInt = 0
            let image = UnsafeRawPointer(header).assumingMemoryBound(to: ImageHeader.self)
            guard let start = getsectiondata(image, "__TEXT", "__swift5_types", &size), size > 0 else { continue }
            ranges.append((UnsafeRawPointer(start), Int(size)))
        }
        return ranges
    }

    /// Whether the image at `path` is part of the operating system.
    private static func isSystemImage(_ path: String) -> Bool {
        path.hasPrefix("/System/Library/") || path.hasPrefix("/usr/lib/")
            || path.contains("/RuntimeRoot/System/Library/") || path.contains("/RuntimeRoot/usr/lib/")
    }
}
#endif
