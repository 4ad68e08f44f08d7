// Process-wide C library settings Swift's Glibc module does not expose.
#ifndef IMGBAKE_SYSTEM_SHIM_H
#define IMGBAKE_SYSTEM_SHIM_H

/// Limits glibc's malloc to `count` arenas (M_ARENA_MAX); call before threads start.
void imgbake_limit_malloc_arenas(int count);

#include <spawn.h>

/// pipe2(fds, O_CLOEXEC) and posix_spawn_file_actions_addchdir_np: GNU extensions, declared only
/// with _GNU_SOURCE. The tests start processes with them (Tests/TestSupport/ChildProcess.swift).
int imgbake_pipe_cloexec(int fds[2]);
int imgbake_spawn_addchdir(posix_spawn_file_actions_t *actions, const char *path);

/// An unnamed file in `directory` (O_TMPFILE), -1 where the filesystem or kernel has none; and
/// linkat through /proc/self/fd, which gives it a name once it is complete (EEXIST if taken).
int imgbake_open_tmpfile(const char *directory, unsigned int mode);
int imgbake_link_fd(int fd, const char *path);

#endif
