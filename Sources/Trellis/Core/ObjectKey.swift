/// The 64-bit key of an object inside its class's table. Keys are allocated in increasing order
/// and never reused, so a stale accessor can never see a different object.
package typealias ObjectKey = UInt64
