/*
 * A C plugin that misbehaves in one place, chosen by macros:
 *   LINE_ID         the line id (default "ccrash")
 *   SWIFT_VERSION   the compiler version it claims (required)
 *   CRASH_IN        CONSTRUCTOR (an ELF constructor: runs when the library is opened),
 *                   ENTRY (imkit_plugin_entry) or REGISTER (register_line)
 *   CRASH_HOW       ABORT, SEGV, LOOP (never returns), OVERRUN (returns after 2 s),
 *                   BUFFER (writes past the error buffer it was given), CLOSE_FDS (closes every
 *                   descriptor from 3 to 63, then succeeds), or NOISE (prints a terminal escape
 *                   on standard output without a newline, then succeeds)
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "imkit_plugin.h"

#ifndef LINE_ID
#define LINE_ID "ccrash"
#endif

#define WHERE_CONSTRUCTOR 1
#define WHERE_ENTRY 2
#define WHERE_REGISTER 3
#define HOW_ABORT 1
#define HOW_SEGV 2
#define HOW_LOOP 3
#define HOW_OVERRUN 4
#define HOW_BUFFER 5
#define HOW_CLOSE_FDS 6
#define HOW_NOISE 7

static void misbehave(char *buffer, size_t capacity) {
#if CRASH_HOW == HOW_ABORT
    (void)buffer; (void)capacity;
    abort();
#elif CRASH_HOW == HOW_SEGV
    (void)buffer; (void)capacity;
    volatile int *nowhere = (int *)8;
    *nowhere = 42;
#elif CRASH_HOW == HOW_LOOP
    (void)buffer; (void)capacity;
    for (;;) { pause(); }
#elif CRASH_HOW == HOW_OVERRUN
    (void)buffer; (void)capacity;
    sleep(2);
#elif CRASH_HOW == HOW_CLOSE_FDS
    (void)buffer; (void)capacity;
    for (int fd = 3; fd < 64; fd++) close(fd);
#elif CRASH_HOW == HOW_NOISE
    (void)buffer; (void)capacity;
    static const char noise[] = "\033]0;PWNED\007\033[31mred";
    write(1, noise, sizeof noise - 1);
#elif CRASH_HOW == HOW_BUFFER
    if (buffer) {
        /* A register_line that ignores error_capacity. */
        for (size_t i = 0; i < capacity + 4096; i++) buffer[i] = 'x';
    }
#endif
}

#if CRASH_IN == WHERE_CONSTRUCTOR
__attribute__((constructor)) static void on_load(void) { misbehave(0, 0); }
#endif

static int32_t register_line(void *registrar, char *error, size_t capacity) {
    (void)registrar;
#if CRASH_IN == WHERE_REGISTER
    misbehave(error, capacity);
#else
    (void)error; (void)capacity;
#endif
    return 0;
}

static const struct imkit_plugin_descriptor descriptor = {
    IMKIT_PLUGIN_ABI_VERSION, LINE_ID, "Crashing C line", "0.0.1", SWIFT_VERSION, register_line,
};

const struct imkit_plugin_descriptor *imkit_plugin_entry(void) {
#if CRASH_IN == WHERE_ENTRY
    misbehave(0, 0);
#endif
    return &descriptor;
}
