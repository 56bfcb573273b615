/*
 * imkit_plugin.h: the C ABI between the imhost host and a business-line plugin.
 *
 * A plugin is a shared library that exports one symbol, imkit_plugin_entry. The host dlopens the
 * library, calls imkit_plugin_entry, and reads the descriptor it returns. The host checks
 * abi_version before it reads any other field, then checks swift_version against its own
 * compiler, then the line id. Only for a line enabled in host.json does it call register_line.
 *
 * Swift plugins never use this header directly: IMKit's `PluginEntry.descriptor(for:)` builds the
 * descriptor. The header is public so that tools and tests can build plugins in C.
 */
#ifndef IMKIT_PLUGIN_H
#define IMKIT_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this ABI. A host refuses a descriptor whose abi_version differs. */
#define IMKIT_PLUGIN_ABI_VERSION 1

/* What a plugin tells the host about itself. It must stay valid for the life of the process. */
struct imkit_plugin_descriptor {
    /* IMKIT_PLUGIN_ABI_VERSION as the plugin was built. Read first; nothing else is trusted
       when it differs. */
    uint32_t abi_version;
    /* The business line's id: [a-z][a-z0-9-]{0,31}, unique among installed plugins. */
    const char *line_id;
    /* A name for people, e.g. "Housing". */
    const char *display_name;
    /* The plugin's own version, e.g. "1.0.0". */
    const char *plugin_version;
    /* The Swift compiler the plugin was built with: the whole first line of `swiftc --version`
       after "Swift version ", e.g. "6.3.1 (swift-6.3.1-RELEASE)", exactly as `imhost --version`
       prints it on its "Swift" line. It must equal the host's, byte for byte: Swift on Linux
       has no ABI stability across compilers. */
    const char *swift_version;
    /* Registers the line's page, message builders, routes and services through the opaque
       registrar. Returns 0 on success; otherwise writes a NUL-terminated reason of at most
       error_capacity bytes (including the NUL) into error and returns non-zero. */
    int32_t (*register_line)(void *registrar, char *error, size_t error_capacity);
};

/* The one symbol every plugin exports. */
const struct imkit_plugin_descriptor *imkit_plugin_entry(void);

/* The type of imkit_plugin_entry, for dlsym. */
typedef const struct imkit_plugin_descriptor *(*imkit_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* IMKIT_PLUGIN_H */
