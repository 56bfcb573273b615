/* The library needs_missing_library.c links and the tests then delete. */
int vanished(void) { return 1; }
