#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <errno.h>
#include <execinfo.h>
#include <stdlib.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "imhost_support.h"

int imhost_standard_streams(void) {
    int opened = 0;
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        /* open returns the lowest free descriptor: this one, as the lower ones are open. */
        int made = open("/dev/null", O_RDWR);
        if (made < 0) return opened;
        if (made != fd) {
            dup2(made, fd);
            close(made);
        }
        opened++;
    }
    return opened;
}

__attribute__((constructor)) static void standard_streams_first(void) { imhost_standard_streams(); }

int imhost_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int imhost_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
#else
    (void)actions; (void)from;
    return ENOSYS;
#endif
}

int imhost_pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    return -1;
#endif
}

int imhost_memory_file(const char *name, long size) {
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0) return -1;
    int reserved = posix_fallocate(fd, 0, size);
    if (reserved != 0) {
        close(fd);
        errno = reserved;
        return -1;
    }
    return fd;
}

int imhost_move_high(int fd, int preferred) {
    struct rlimit limit;
    int floor = preferred;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && (rlim_t)floor >= limit.rlim_cur / 2) {
        floor = (int)(limit.rlim_cur / 2);
    }
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, floor);
    if (moved < 0 && (errno == EINVAL || errno == EMFILE)) moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    return moved;
}

int imhost_die_with_parent(pid_t parent) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return -1;
    return getppid() == parent ? 0 : -1;
}

int imhost_set_process_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

/* Glibc hands constructors main's argc and argv. */
__attribute__((constructor)) static void bound_exec(int argc, char **argv) {
    if (argc < 4 || strcmp(argv[1], IMHOST_BOUND_EXEC) != 0) return;
    char *end = 0;
    long parent = strtol(argv[2], &end, 10);
    if (*argv[2] == 0 || *end != 0 || parent <= 1) _exit(127);
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != (pid_t)parent) _exit(127);
    execv(argv[3], argv + 3);
    dprintf(2, "cannot run %s: %s\n", argv[3], strerror(errno));
    _exit(127);
}

#define MAX_IMAGES 1024

struct image {
    const void *base;
    uint8_t mark[IMHOST_CRUMB_MARK_LENGTH];
};

static unsigned char *crumb;
static struct image images[MAX_IMAGES];
static volatile sig_atomic_t image_count;

static const struct image *image_of(const void *address) {
    Dl_info info;
    if (!dladdr(address, &info) || !info.dli_fbase) return 0;
    for (int i = 0; i < image_count; i++) {
        if (images[i].base == info.dli_fbase) return &images[i];
    }
    return 0;
}

static void blame(int signal, siginfo_t *info, void *context) {
    (void)info;
    (void)context;
    if (crumb) *(volatile uint32_t *)(crumb + IMHOST_CRUMB_SIGNAL) = (uint32_t)signal;
    if (crumb && *(volatile uint32_t *)(crumb + IMHOST_CRUMB_DEPTH) == 0) {
        void *frames[64];
        int count = backtrace(frames, 64);
        for (int i = 0; i < count; i++) {
            const struct image *found = image_of(frames[i]);
            if (!found) continue;
            unsigned char *frame = crumb + IMHOST_CRUMB_FRAME;
            uint32_t site = IMHOST_CRUMB_SITE_BACKGROUND;
            memcpy(frame + IMHOST_CRUMB_SITE, &site, sizeof site);
            memcpy(frame + IMHOST_CRUMB_MARK, found->mark, IMHOST_CRUMB_MARK_LENGTH);
            static const char key[] = "a thread it started";
            uint16_t length = sizeof key - 1;
            memcpy(frame + IMHOST_CRUMB_KEY_LENGTH, &length, sizeof length);
            memcpy(frame + IMHOST_CRUMB_KEY, key, length);
            uint16_t none = 0;
            memcpy(frame + IMHOST_CRUMB_MESSAGE_LENGTH, &none, sizeof none);
            uint32_t depth = 1;
            memcpy(crumb + IMHOST_CRUMB_DEPTH, &depth, sizeof depth);
            break;
        }
    }
    /* SA_RESETHAND restored the default action. Raised again, the signal kills the process as
       it would have: on return from here for a fault, at once for a signal sent by kill(). */
    raise(signal);
}

void imhost_crash_watch(void *breadcrumb) {
    crumb = breadcrumb;
    void *warm[1];
    backtrace(warm, 1); /* The first call loads the unwinder; do it now, not in a dying process. */
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = blame;
    action.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    int fatal[] = { SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE, SIGSYS };
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) sigaction(fatal[i], &action, 0);
}

int imhost_crash_add_image(const void *address, const uint8_t *mark, size_t length) {
    Dl_info info;
    if (length != IMHOST_CRUMB_MARK_LENGTH || image_count >= MAX_IMAGES) return -1;
    if (!dladdr(address, &info) || !info.dli_fbase) return -1;
    images[image_count].base = info.dli_fbase;
    memcpy(images[image_count].mark, mark, IMHOST_CRUMB_MARK_LENGTH);
    image_count = image_count + 1;
    return 0;
}
