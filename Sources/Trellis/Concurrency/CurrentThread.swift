import Foundation

/// The calling thread as a number, written once for every platform: `pthread_t` is an integer
/// on Linux and a pointer on Darwin, so an expression that converts one does not compile for the
/// other unless it goes through `Int(bitPattern:)`, which takes both.
enum CurrentThread {
    /// A number naming the calling thread while it runs (another thread may get it after this
    /// one ends).
    static var identity: UInt { UInt(bitPattern: Int(bitPattern: pthread_self())) }
}
