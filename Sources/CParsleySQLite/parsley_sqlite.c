#include "parsley_sqlite.h"

typedef void (*parsley_destructor)(void *);
int sqlite_nio_sqlite3_bind_text(sqlite3_stmt *, int, const char *, int, parsley_destructor);

int parsley_sqlite_bind_text(sqlite3_stmt *stmt, int index, const char *text, int length) {
    return sqlite_nio_sqlite3_bind_text(stmt, index, text, length, (parsley_destructor)-1);
}
