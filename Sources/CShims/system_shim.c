#define _GNU_SOURCE
#include "system_shim.h"
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <unistd.h>

void imgbake_limit_malloc_arenas(int count) {
#ifdef M_ARENA_MAX
    mallopt(M_ARENA_MAX, count);
#else
    (void)count;
#endif
}

int imgbake_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

int imgbake_spawn_addchdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}

int imgbake_open_tmpfile(const char *directory, unsigned int mode) {
    return open(directory, O_WRONLY | O_TMPFILE | O_CLOEXEC, mode);
}

int imgbake_link_fd(int fd, const char *path) {
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, self, AT_FDCWD, path, AT_SYMLINK_FOLLOW);
}
