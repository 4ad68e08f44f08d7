// SQLITE_TRANSIENT is a macro casting -1 to a function pointer; Swift cannot spell it.
#ifndef IMGBAKE_SQLITE_SHIM_H
#define IMGBAKE_SQLITE_SHIM_H
#include <sqlite3.h>

/// Binds a copy of `len` bytes of text (SQLite copies it before returning).
static inline int imgbake_sqlite3_bind_text(sqlite3_stmt *s, int i, const char *text, int len) {
    return sqlite3_bind_text(s, i, text, len, SQLITE_TRANSIENT);
}
/// Binds a copy of `len` bytes.
static inline int imgbake_sqlite3_bind_blob(sqlite3_stmt *s, int i, const void *data, int len) {
    return sqlite3_bind_blob(s, i, data, len, SQLITE_TRANSIENT);
}
#endif
