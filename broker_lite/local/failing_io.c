/*
 * failing_io: an LD_PRELOAD library that makes writes and syncs of chosen directories fail
 * with EIO, as a failing disk's do, so a local cluster can give one broker's log directory
 * real I/O errors (broker_lite.local.disks).
 *
 * The process finds its control file in KPY_FAILING_IO_CONTROL: CONTROL_SIZE bytes, mapped
 * shared, holding the directories to fail as absolute paths, each ended by '\n', the whole
 * list ended by '\0' (an empty file, or a first byte '\0': nothing fails). The cluster rewrites
 * it while the process runs; the process reads it on every call below.
 *
 * Failed, for a file descriptor whose path (/proc/self/fd/N) is under one of the directories:
 * write, pwrite, pwrite64, writev, pwritev, pwritev64, pwritev2, pwritev64v2 (what CPython's
 * os.pwritev calls), fsync, fdatasync, ftruncate, ftruncate64;
 * and open/openat of a path under one of them for writing or creating. Everything else (reads,
 * sendfile, mmap) goes through: a disk that fails writes may still be read.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define CONTROL_SIZE 4096

static const char *control;

__attribute__((constructor)) static void map_control(void) {
    const char *path = getenv("KPY_FAILING_IO_CONTROL");
    if (path == NULL) return;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    void *mapped = mmap(NULL, CONTROL_SIZE, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (mapped != MAP_FAILED) control = mapped;
}

/* Whether ``path`` is one of the failing directories or under one. */
static int failing_path(const char *path) {
    if (control == NULL || control[0] == '\0' || path == NULL) return 0;
    const char *entry = control;
    while (*entry != '\0' && entry < control + CONTROL_SIZE) {
        const char *end = memchr(entry, '\n', control + CONTROL_SIZE - entry);
        if (end == NULL) return 0;
        size_t length = (size_t)(end - entry);
        if (length > 0 && strncmp(path, entry, length) == 0 &&
            (path[length] == '/' || path[length] == '\0'))
            return 1;
        entry = end + 1;
    }
    return 0;
}

static int failing_fd(int fd) {
    if (control == NULL || control[0] == '\0') return 0;
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t length = readlink(link, path, sizeof path - 1);
    if (length <= 0) return 0;
    path[length] = '\0';
    return failing_path(path);
}

#define REAL(name) static __typeof__(name) *real; if (real == NULL) real = dlsym(RTLD_NEXT, #name)
#define FAIL_FD(fd) if (failing_fd(fd)) { errno = EIO; return -1; }

ssize_t write(int fd, const void *buffer, size_t count) {
    REAL(write); FAIL_FD(fd); return real(fd, buffer, count);
}
ssize_t pwrite(int fd, const void *buffer, size_t count, off_t offset) {
    REAL(pwrite); FAIL_FD(fd); return real(fd, buffer, count, offset);
}
ssize_t pwrite64(int fd, const void *buffer, size_t count, off64_t offset) {
    REAL(pwrite64); FAIL_FD(fd); return real(fd, buffer, count, offset);
}
ssize_t writev(int fd, const struct iovec *iov, int count) {
    REAL(writev); FAIL_FD(fd); return real(fd, iov, count);
}
ssize_t pwritev(int fd, const struct iovec *iov, int count, off_t offset) {
    REAL(pwritev); FAIL_FD(fd); return real(fd, iov, count, offset);
}
ssize_t pwritev64(int fd, const struct iovec *iov, int count, off64_t offset) {
    REAL(pwritev64); FAIL_FD(fd); return real(fd, iov, count, offset);
}
ssize_t pwritev2(int fd, const struct iovec *iov, int count, off_t offset, int flags) {
    REAL(pwritev2); FAIL_FD(fd); return real(fd, iov, count, offset, flags);
}
ssize_t pwritev64v2(int fd, const struct iovec *iov, int count, off64_t offset, int flags) {
    REAL(pwritev64v2); FAIL_FD(fd); return real(fd, iov, count, offset, flags);
}
int fsync(int fd) {
    REAL(fsync); FAIL_FD(fd); return real(fd);
}
int fdatasync(int fd) {
    REAL(fdatasync); FAIL_FD(fd); return real(fd);
}
int ftruncate(int fd, off_t length) {
    REAL(ftruncate); FAIL_FD(fd); return real(fd, length);
}

int ftruncate64(int fd, off64_t length) {
    REAL(ftruncate64); FAIL_FD(fd); return real(fd, length);
}

static int writes(int flags) {
    return (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) != 0;
}

/* An open's mode argument, there only when it creates (O_CREAT, O_TMPFILE). */
#define OPEN_MODE(mode, flags) mode_t mode = 0; \
    if ((flags) & (O_CREAT | O_TMPFILE)) { va_list args; va_start(args, flags); \
        mode = va_arg(args, mode_t); va_end(args); }
/* An open for writing of a file in a failing directory fails with EIO. */
#define FAIL_OPEN(path, flags) \
    if (writes(flags) && (path)[0] == '/' && failing_path(path)) { errno = EIO; return -1; }

int open(const char *path, int flags, ...) {
    REAL(open); OPEN_MODE(mode, flags); FAIL_OPEN(path, flags); return real(path, flags, mode);
}
int open64(const char *path, int flags, ...) {
    REAL(open64); OPEN_MODE(mode, flags); FAIL_OPEN(path, flags); return real(path, flags, mode);
}
int openat(int dirfd, const char *path, int flags, ...) {
    REAL(openat); OPEN_MODE(mode, flags); FAIL_OPEN(path, flags);
    return real(dirfd, path, flags, mode);
}
int openat64(int dirfd, const char *path, int flags, ...) {
    REAL(openat64); OPEN_MODE(mode, flags); FAIL_OPEN(path, flags);
    return real(dirfd, path, flags, mode);
}
