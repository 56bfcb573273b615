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

/* sqlite3_db_config is variadic, which Swift cannot call. A connection to a damaged database is
   closed through this first, so closing it neither checkpoints its write-ahead log into the file
   nor deletes the log by name. */
static inline int imhost_sqlite_no_checkpoint_on_close(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}
