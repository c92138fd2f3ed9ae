// The per-thread check behind trellis_observation_may_track (see the header).
#define _GNU_SOURCE
#include "CTrellisObservation.h"

#include <pthread.h>
#include <string.h>

#if defined(__linux__) && defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 35)
#include <link.h>
#define TRELLIS_FINDS_TLS_BLOCKS 1
#endif

__thread void *const *trellis_observation_slot __attribute__((tls_model("initial-exec"))) = NULL;

/// A word that is always null, one per thread: the slot of a thread whose real pointer could not
/// be found (then nothing of Trellis takes part in tracking; see the header). Per thread so that
/// slots tell threads apart.
static __thread void *never __attribute__((tls_model("initial-exec"))) = NULL;

/// Set once the layout was checked (by the Swift side, with a real tracking closure).
static bool layout_is_exact = false;
static pthread_once_t layout_check = PTHREAD_ONCE_INIT;

/// Implemented in Swift (ObservationFastCheck.swift): runs a tracking closure and returns
/// whether the slot of this thread reads non-null inside it and null outside.
extern bool trellis_observation_check_slot(void);

#ifdef TRELLIS_FINDS_TLS_BLOCKS
/// The Observation runtime's thread-local block: a pointer (the tracking access list) and a
/// flag, 16 bytes, the whole TLS segment of libswiftObservation (Swift 5.9 to 6.3).
/// The C library's thread-local lookup (module number and offset), as compiled code calls it.
typedef struct {
    unsigned long module;
    unsigned long offset;
} trellis_tls_index;
extern void *__tls_get_addr(trellis_tls_index *index);

static int find_block(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    if (info->dlpi_name == NULL || strstr(info->dlpi_name, "libswiftObservation.so") == NULL) return 0;
    for (int index = 0; index < info->dlpi_phnum; index++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[index];
        if (header->p_type == PT_TLS && header->p_memsz == 16 && info->dlpi_tls_modid != 0) {
            *(size_t *)data = info->dlpi_tls_modid;
            return 1;
        }
    }
    return 1;
}

static void *const *find_slot(void) {
    size_t module = 0;
    dl_iterate_phdr(find_block, &module);
    if (module == 0) return &never;
    trellis_tls_index index = {module, 0};
    void *block = __tls_get_addr(&index);
    return block != NULL ? (void *const *)block : &never;
}
#else
// Elsewhere (Apple platforms, other C libraries) the runtime's pointer is not found.
static void *const *find_slot(void) { return &never; }
#endif

static void check_layout(void) {
    layout_is_exact = trellis_observation_slot != &never && trellis_observation_check_slot();
}

void *const *trellis_observation_resolve_slot(void) {
    trellis_observation_slot = find_slot();
    // The first thread checks the layout with a real tracking closure (which reads the slot
    // just set); any thread resolving meanwhile waits for the answer.
    pthread_once(&layout_check, check_layout);
    if (!layout_is_exact) trellis_observation_slot = &never;
    return trellis_observation_slot;
}

bool trellis_observation_fast_check_is_exact(void) {
    if (trellis_observation_slot == NULL) trellis_observation_resolve_slot();
    return layout_is_exact;
}
