#ifndef CTRELLIS_OBSERVATION_H
#define CTRELLIS_OBSERVATION_H

#include <stdbool.h>
#include <stddef.h>

/// Whether this thread may be inside a `withObservationTracking` closure, answered in a few
/// instructions so that a property read pays almost nothing for Swift Observation.
///
/// The Observation runtime keeps, per thread, a pointer to the access list of the tracking
/// closure running on it (null outside one). `trellis_observation_slot` caches the address of
/// this thread's pointer (found once per thread by `trellis_observation_resolve_slot`, through
/// the C library's list of loaded modules and their thread-local blocks). The layout is checked
/// with a real tracking closure at first use; when the pointer cannot be found or the check
/// fails (another C library or runtime layout), the slot points at a null word of the thread's
/// own: managed objects then take no part in tracking, and
/// ``trellis_observation_fast_check_is_exact`` says so.
///
/// Either way a resolved slot is an address no other living thread has, so comparing it with
/// the slot a Realm kept from the thread that opened it also tells whether this is that thread.
extern __thread void *const *trellis_observation_slot __attribute__((tls_model("initial-exec")));

/// Finds and caches this thread's slot (see above).
void *const *trellis_observation_resolve_slot(void);

static inline __attribute__((always_inline)) bool trellis_observation_may_track(void) {
    void *const *slot = trellis_observation_slot;
    if (__builtin_expect(slot == NULL, 0)) slot = trellis_observation_resolve_slot();
    return *slot != NULL;
}

/// This thread's slot, or null while it is not resolved on this thread: one load, for a caller
/// that compares it with a slot kept by a Realm (a null answer never matches one; the caller's
/// slower path resolves it).
static inline __attribute__((always_inline)) void *const *trellis_observation_resolved_slot(void) {
    return trellis_observation_slot;
}

/// This thread's slot (resolved if needed), for a caller that keeps it to test it later on
/// this same thread.
static inline __attribute__((always_inline)) void *const *trellis_observation_current_slot(void) {
    void *const *slot = trellis_observation_slot;
    return slot != NULL ? slot : trellis_observation_resolve_slot();
}

/// Whether the check found the Observation runtime's per-thread pointer.
bool trellis_observation_fast_check_is_exact(void);

#endif
