/* A shared library that is not a plugin: it has no imkit_plugin_entry. */
int not_a_plugin(void) { return 42; }
