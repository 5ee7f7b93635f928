#include "parsley_sqlite.h"

typedef void (*parsley_destructor)(void *);
int sqlite_nio_sqlite3_bind_text(sqlite3_stmt *, int, const char *, int, parsley_destructor);

int parsley_sqlite_bind_text(sqlite3_stmt *stmt, int index, const char *text, int length) {
    return sqlite_nio_sqlite3_bind_text(stmt, index, text, length, (parsley_destructor)-1);
}

int sqlite_nio_sqlite3_db_config(sqlite3 *, int op, ...);

int parsley_sqlite_enable_qpsg(sqlite3 *db) {
    // SQLITE_DBCONFIG_ENABLE_QPSG (1007): plans never depend on bound values, so cached statements are never
    // re-prepared after a new bind (without it, a parameter compared with an indexed column forced a
    // re-prepare on every run).
    return sqlite_nio_sqlite3_db_config(db, 1007, 1, (int *)0);
}
