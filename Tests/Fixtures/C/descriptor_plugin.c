/*
 * A plugin written in C against imkit_plugin.h, configured by macros so one file makes every
 * ABI fixture the loader tests need:
 *   LINE_ID        the line id (default "cline")
 *   ABI_VERSION    the descriptor's abi_version (default IMKIT_PLUGIN_ABI_VERSION)
 *   SWIFT_VERSION  the compiler version it claims (required)
 *   FAIL_REASON    when set, register_line fails with this reason
 *   NO_REGISTER    when set, the descriptor's fields after abi_version are left NULL
 */
#include <string.h>
#include "imkit_plugin.h"

#ifndef LINE_ID
#define LINE_ID "cline"
#endif
#ifndef ABI_VERSION
#define ABI_VERSION IMKIT_PLUGIN_ABI_VERSION
#endif

static int32_t register_line(void *registrar, char *error, size_t capacity) {
    (void)registrar;
#ifdef FAIL_REASON
    strncpy(error, FAIL_REASON, capacity - 1);
    error[capacity - 1] = '\0';
    return 1;
#else
    (void)error;
    (void)capacity;
    return 0;
#endif
}

#ifdef NO_REGISTER
static const struct imkit_plugin_descriptor descriptor = { ABI_VERSION, 0, 0, 0, 0, 0 };
#else
static const struct imkit_plugin_descriptor descriptor = {
    ABI_VERSION, LINE_ID, "C line", "0.0.1", SWIFT_VERSION, register_line,
};
#endif

const struct imkit_plugin_descriptor *imkit_plugin_entry(void) { return &descriptor; }
