/*
 * The few things the host needs from the C library that Swift cannot call directly: prctl is
 * variadic, getrandom is not in Swift's Glibc module, and a crash handler must be plain C to be
 * safe to run in a dying process.
 */
#ifndef IMHOST_SUPPORT_H
#define IMHOST_SUPPORT_H

#include <spawn.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/types.h>

/* The breadcrumb's layout, in bytes (Breadcrumb.swift reads these too, so the two agree): the
   header's depth (a uint32), then frames of IMHOST_CRUMB_FRAME bytes; in a frame, the site (a
   uint32), the line's mark, the key's length (a uint16) and text (128 bytes), the message's
   length and text (156 bytes: its id, and for a message from another host its sender and
   global id). */
enum {
    IMHOST_CRUMB_DEPTH = 12,
    /* The fatal signal this process's crash handler caught (a uint32), 0 if none: a breadcrumb
       left in line code says whether the line's code died, or the process was killed with it. */
    IMHOST_CRUMB_SIGNAL = 20,
    IMHOST_CRUMB_FRAME = 512,
    IMHOST_CRUMB_SITE = 0,
    IMHOST_CRUMB_MARK = 8,
    IMHOST_CRUMB_KEY_LENGTH = 224,
    IMHOST_CRUMB_KEY = 226,
    IMHOST_CRUMB_MESSAGE_LENGTH = 354,
    IMHOST_CRUMB_MESSAGE = 356,
    IMHOST_CRUMB_MARK_LENGTH = 216,
    /* CrashSite.background: a thread the line started. */
    IMHOST_CRUMB_SITE_BACKGROUND = 11,
};

/* Makes sure descriptors 0, 1 and 2 are open, opening /dev/null on any that is closed, so no
   file the process opens later can become its standard input, output or error. Runs before
   main as a constructor; calling it again does nothing. Returns the number it opened. */
int imhost_standard_streams(void);

/* pipe2(fds, O_CLOEXEC): a pipe whose ends are close-on-exec from the start, so no child
   started meanwhile by another thread inherits one. Returns 0, or -1 with errno set. */
int imhost_pipe_cloexec(int fds[2]);

/* Adds a file action that closes every descriptor from `from` up in the child: it starts with
   only what it was handed, whatever a library opened without close-on-exec. Returns 0, or an
   error number where the C library cannot (before glibc 2.34). */
int imhost_spawn_close_from(posix_spawn_file_actions_t *actions, int from);

/* A file in memory only (memfd_create, close-on-exec), `size` bytes with its pages reserved:
   touching a mapping of it cannot fail for want of disk space. Returns its descriptor, or -1
   with errno set. */
int imhost_memory_file(const char *name, long size);

/* Duplicates `fd` to a close-on-exec descriptor numbered `preferred` or higher, out of the way of
   code that closes or reuses low numbers; where the open-file limit leaves no room up there, to
   the highest range it allows (half the limit and up), else to any free number. Returns the new
   descriptor, or -1 with errno set. */
int imhost_move_high(int fd, int preferred);

/* Asks the kernel to kill this process (SIGKILL) when its parent dies, so a scanner or chat
   worker never outlives the host that started it. Returns 0 when `parent` is still this
   process's parent, -1 when it is already gone (the caller should exit). */
int imhost_die_with_parent(pid_t parent);

/* Names this process (its main thread) what `ps` and /proc/PID/comm show: at most 15 bytes
   are kept. Returns 0, or -1 with errno set. */
int imhost_set_process_name(const char *name);

/* The argument that makes a process an exec wrapper bound to its parent. A process started as
   `EXE IMHOST_BOUND_EXEC PARENT PROGRAM ARGS...`, where EXE is any executable linking this
   library (imhost, its tests, its benchmarks: a parent names itself as /proc/self/exe), asks the
   kernel for SIGTERM when PARENT dies (PR_SET_PDEATHSIG, which survives execve), checks that
   PARENT is still its parent, as it may have died before the request, and becomes PROGRAM
   ARGS... with execve. It runs before main, so no Swift code runs in it: a child the host cannot
   change (mosquitto) never outlives the process that started it, even one killed outright. If
   PARENT is gone it exits 127; if PROGRAM cannot run it says why on standard error and exits 127.
   The kernel ties the signal to the thread that started the child: start one from a thread
   that lives as long as the child should. */
#define IMHOST_BOUND_EXEC "--imhost-exec-bound-to-parent"

/* A descriptor that becomes readable when process `pid` (a child) ends, so its end can be
   waited for with poll alongside its pipes; -1 where the kernel has no pidfd_open (before 5.3). */
int imhost_pidfd_open(pid_t pid);

/* Blames crashes of threads a line started on the line. `breadcrumb` is this process's mapped
   breadcrumb (see Breadcrumb.swift for its layout). When a fatal signal arrives while the
   breadcrumb says the host is in its own code, the handler walks the crashing thread's stack; if
   a frame lies in a registered line's library, it writes that line's mark into the breadcrumb's
   first frame, then lets the signal kill the process as it would have. */
void imhost_crash_watch(void *breadcrumb);

/* Registers a line's library, found by any address inside it, with the breadcrumb mark (216
   bytes) that names the line. Returns 0, or -1 when the address is in no library or the table is full. */
int imhost_crash_add_image(const void *address, const uint8_t *mark, size_t length);

/* The user owning the other end of a TCP connection on loopback: the socket at `client`
   (127.0.0.1 and the port the connection came from) connected to 127.0.0.1:`server_port`. The
   kernel says (sock_diag, the netlink interface `ss` uses; /proc/net/tcp where netlink is
   refused). Returns 0 with `*uid` set, or -1 when the socket is not found (it already closed,
   or neither source answers). */
int imhost_loopback_peer_uid(const void *client, unsigned int client_length, uint16_t server_port, uid_t *uid);

/* Raises this process's soft limit on open files to `wanted`, or to its hard limit when that is
   lower. Returns the soft limit now in force. */
long imhost_raise_open_files(long wanted);

#endif
