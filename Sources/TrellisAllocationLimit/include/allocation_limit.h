// The allocation limit has no API: it replaces malloc and friends when preloaded
// (LD_PRELOAD) and reads TRELLIS_ALLOCATION_LIMIT from the environment.
