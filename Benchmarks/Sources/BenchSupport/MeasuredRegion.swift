/// The workload ``trellisMeasuredRegion()`` runs. A global, not a parameter: given a closure
/// argument, the optimiser makes copies of the function with the closure merged in, under names
/// callgrind cannot attribute.
nonisolated(unsafe) private var measuredBody: () throws -> Void = {}

/// The only function whose instructions callgrind collects (`--toggle-collect`): it runs the
/// workload and nothing else.
@inline(never) @_optimize(none)
public func trellisMeasuredRegion() throws {
    try measuredBody()
}

/// Runs `body` inside ``trellisMeasuredRegion()``.
public func measured(_ body: @escaping () throws -> Void) throws {
    measuredBody = body
    defer { measuredBody = {} }
    try trellisMeasuredRegion()
}
