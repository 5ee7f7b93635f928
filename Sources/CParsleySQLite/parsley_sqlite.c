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

const unsigned char *sqlite_nio_sqlite3_value_text(sqlite3_value *);
int sqlite_nio_sqlite3_value_bytes(sqlite3_value *);
void sqlite_nio_sqlite3_result_int(sqlite3_context *, int);

/// Whether the element `[start, start+length)` of a permission list equals one of the principals, which are
/// separated by '\n' in `principals`.
static int parsley_is_principal(const unsigned char *element, int length, const unsigned char *principals, int count) {
    int i = 0;
    while (i <= count) {
        int j = i;
        while (j < count && principals[j] != '\n') j++;
        if (j - i == length) {
            int k = 0;
            while (k < length && principals[i + k] == element[k]) k++;
            if (k == length) return 1;
        }
        i = j + 1;
    }
    return 0;
}

/// parsley_holds_any(list, principals): 1 when the JSON string array `list` (a permission column, written
/// compactly by Parsley; PostgreSQL's `", "` spacing is accepted too) has an element equal to one of the
/// '\n'-separated `principals`, else 0. One pass over the list, whatever the number of principals.
/// Principals never contain quotes, backslashes or control characters (the caller sends those through the
/// general json_each test), so an element holding an escape can never equal one and is compared as written.
static void parsley_holds_any(sqlite3_context *context, int argc, sqlite3_value **argv) {
    (void)argc;
    const unsigned char *list = sqlite_nio_sqlite3_value_text(argv[0]);
    int listLength = sqlite_nio_sqlite3_value_bytes(argv[0]);
    const unsigned char *principals = sqlite_nio_sqlite3_value_text(argv[1]);
    int principalsLength = sqlite_nio_sqlite3_value_bytes(argv[1]);
    if (list == 0 || principals == 0) {
        sqlite_nio_sqlite3_result_int(context, 0);
        return;
    }
    int i = 0;
    while (i < listLength) {
        if (list[i] != '"') {
            i++;
            continue;
        }
        int start = i + 1, j = start;
        while (j < listLength && list[j] != '"') {
            if (list[j] == '\\' && j + 1 < listLength) j++;  // an escaped character, quote included
            j++;
        }
        if (j >= listLength) break;
        if (parsley_is_principal(list + start, j - start, principals, principalsLength)) {
            sqlite_nio_sqlite3_result_int(context, 1);
            return;
        }
        i = j + 1;
    }
    sqlite_nio_sqlite3_result_int(context, 0);
}

int parsley_sqlite_install_permission_test(sqlite3 *db) {
    // SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS (0x200000)
    return sqlite_nio_sqlite3_create_function_v2(db, "parsley_holds_any", 2, 1 | 0x800 | 0x200000, 0, parsley_holds_any, 0, 0, 0);
}

void *sqlite_nio_sqlite3_wal_hook(sqlite3 *, int (*)(void *, sqlite3 *, const char *, int), void *);

static int parsley_wal_pages(void *pages, sqlite3 *db, const char *name, int count) {
    (void)db;
    (void)name;
    *(int *)pages = count;
    return 0;
}

void parsley_sqlite_watch_wal(sqlite3 *db, int *pages) {
    sqlite_nio_sqlite3_wal_hook(db, parsley_wal_pages, pages);
}
