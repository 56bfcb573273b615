/* SQLite, as Debian's libsqlite3-dev installs it (FTS5 included). The host's store uses it
   through this module; nothing is vendored. */
#include <sqlite3.h>

/* SQLITE_TRANSIENT is a cast macro Swift cannot import: binding text and blobs goes through
   these, which make SQLite copy the bytes before the call returns. */
static inline int imhost_sqlite_bind_text(sqlite3_stmt *statement, int index, const char *text, int bytes) {
    return sqlite3_bind_text(statement, index, text, bytes, SQLITE_TRANSIENT);
}

static inline int imhost_sqlite_bind_blob(sqlite3_stmt *statement, int index, const void *bytes, int count) {
    return sqlite3_bind_blob(statement, index, bytes, count, SQLITE_TRANSIENT);
}
