/* A plugin that links a library the tests delete after building it, so dlopen fails. */
#include "imkit_plugin.h"
extern int vanished(void);
const struct imkit_plugin_descriptor *imkit_plugin_entry(void) { return vanished() ? 0 : 0; }
