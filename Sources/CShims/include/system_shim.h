// Process-wide C library settings Swift's Glibc module does not expose.
#ifndef IMGBAKE_SYSTEM_SHIM_H
#define IMGBAKE_SYSTEM_SHIM_H

/// Limits glibc's malloc to `count` arenas (M_ARENA_MAX); call before threads start.
void imgbake_limit_malloc_arenas(int count);

#endif
