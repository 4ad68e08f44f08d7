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

// glibc 2.35 gave hypot and hypotf a new symbol version (the same functions, with C99's error handling).
// Foundation's CGFloat and Swift's Glibc module refer to them (imgbake calls neither), and they alone
// would raise the binary's glibc floor from 2.34 to 2.35 (RHEL 9 and its rebuilds have 2.34). The
// executables link with --wrap=hypot and --wrap=hypotf (Package.swift), so those references land here
// and go to the versions every glibc on x86_64 has.
__asm__(".symver imgbake_glibc_hypot, hypot@GLIBC_2.2.5");
__asm__(".symver imgbake_glibc_hypotf, hypotf@GLIBC_2.2.5");
double imgbake_glibc_hypot(double x, double y);
float imgbake_glibc_hypotf(float x, float y);
double __wrap_hypot(double x, double y) { return imgbake_glibc_hypot(x, y); }
float __wrap_hypotf(float x, float y) { return imgbake_glibc_hypotf(x, y); }

// Likewise GCC 12 gave std::condition_variable::wait(unique_lock&) a new version (GLIBCXX_3.4.30), which
// Foundation's ICU refers to: the only symbol that needs a libstdc++ newer than GCC 11's (3.4.29, the
// one RHEL 9 has). --wrap sends it to the version every libstdc++ since GCC 4.4 has.
__asm__(".symver imgbake_condition_variable_wait, _ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE@GLIBCXX_3.4.11");
void imgbake_condition_variable_wait(void *condition, void *lock);
void __wrap__ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE(void *condition, void *lock) {
    imgbake_condition_variable_wait(condition, lock);
}

// GCC 12's headers, with which the stack's libjxl is compiled, call std::__throw_bad_array_new_length()
// (GLIBCXX_3.4.29, GCC 11) where an allocation's size overflows. Executables link with
// --wrap=_ZSt28__throw_bad_array_new_lengthv (Package.swift): the call throws std::bad_alloc, its base
// class, through std::__throw_bad_alloc() (GLIBCXX_3.4), which every libstdc++ has.
__asm__(".symver imgbake_throw_bad_alloc, _ZSt17__throw_bad_allocv@GLIBCXX_3.4");
__attribute__((noreturn)) void imgbake_throw_bad_alloc(void);
__attribute__((noreturn)) void __wrap__ZSt28__throw_bad_array_new_lengthv(void) { imgbake_throw_bad_alloc(); }
