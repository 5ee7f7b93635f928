// Declarations of the SQLite C API as compiled into sqlite-nio (its vendored amalgamation renames every
// function with the `sqlite_nio_` prefix). Parsley calls the engine directly so it can keep prepared
// statements and run cheap statements without a thread hop; the code itself comes from sqlite-nio.
#ifndef PARSLEY_SQLITE_H
#define PARSLEY_SQLITE_H

#include <stdint.h>

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
typedef struct sqlite3_value sqlite3_value;
typedef struct sqlite3_context sqlite3_context;
typedef int64_t sqlite3_int64;

#define PARSLEY_SQLITE_OK 0
#define PARSLEY_SQLITE_INTERRUPT 9
#define PARSLEY_SQLITE_CONSTRAINT 19
/* Extended result codes (sqlite3_extended_errcode): SQLITE_CONSTRAINT | (6 << 8) and | (8 << 8). */
#define PARSLEY_SQLITE_CONSTRAINT_PRIMARYKEY 1555
#define PARSLEY_SQLITE_CONSTRAINT_UNIQUE 2067
#define PARSLEY_SQLITE_ROW 100
#define PARSLEY_SQLITE_DONE 101
#define PARSLEY_SQLITE_INTEGER 1
#define PARSLEY_SQLITE_FLOAT 2
#define PARSLEY_SQLITE_TEXT 3
#define PARSLEY_SQLITE_BLOB 4
#define PARSLEY_SQLITE_NULL 5
#define PARSLEY_SQLITE_OPEN_READWRITE 0x00000002
#define PARSLEY_SQLITE_OPEN_CREATE 0x00000004
#define PARSLEY_SQLITE_OPEN_FULLMUTEX 0x00010000
#define PARSLEY_SQLITE_PREPARE_PERSISTENT 0x01
#define PARSLEY_SQLITE_UTF8 1
#define PARSLEY_SQLITE_DETERMINISTIC 0x000000800
#define PARSLEY_SQLITE_STMTSTATUS_VM_STEP 4

int sqlite_nio_sqlite3_open_v2(const char *filename, sqlite3 **ppDb, int flags, const char *zVfs);
int sqlite_nio_sqlite3_close_v2(sqlite3 *);
int sqlite_nio_sqlite3_prepare_v3(sqlite3 *db, const char *zSql, int nByte, unsigned int prepFlags, sqlite3_stmt **ppStmt, const char **pzTail);
int sqlite_nio_sqlite3_finalize(sqlite3_stmt *pStmt);
int sqlite_nio_sqlite3_reset(sqlite3_stmt *pStmt);
int sqlite_nio_sqlite3_clear_bindings(sqlite3_stmt *);
int sqlite_nio_sqlite3_step(sqlite3_stmt *);
int sqlite_nio_sqlite3_bind_int64(sqlite3_stmt *, int, sqlite3_int64);
int sqlite_nio_sqlite3_bind_double(sqlite3_stmt *, int, double);
int sqlite_nio_sqlite3_bind_null(sqlite3_stmt *, int);
int sqlite_nio_sqlite3_column_count(sqlite3_stmt *pStmt);
int sqlite_nio_sqlite3_column_type(sqlite3_stmt *, int iCol);
sqlite3_int64 sqlite_nio_sqlite3_column_int64(sqlite3_stmt *, int iCol);
double sqlite_nio_sqlite3_column_double(sqlite3_stmt *, int iCol);
const unsigned char *sqlite_nio_sqlite3_column_text(sqlite3_stmt *, int iCol);
int sqlite_nio_sqlite3_column_bytes(sqlite3_stmt *, int iCol);
const char *sqlite_nio_sqlite3_errmsg(sqlite3 *);
int sqlite_nio_sqlite3_extended_errcode(sqlite3 *db);
void sqlite_nio_sqlite3_interrupt(sqlite3 *);
int sqlite_nio_sqlite3_stmt_status(sqlite3_stmt *, int op, int resetFlg);
int sqlite_nio_sqlite3_busy_timeout(sqlite3 *, int ms);
/// Turns on the query planner stability guarantee (see parsley_sqlite.c).
int parsley_sqlite_enable_qpsg(sqlite3 *db);
int sqlite_nio_sqlite3_value_type(sqlite3_value *);
sqlite3_int64 sqlite_nio_sqlite3_value_int64(sqlite3_value *);
double sqlite_nio_sqlite3_value_double(sqlite3_value *);
const unsigned char *sqlite_nio_sqlite3_value_text(sqlite3_value *);
int sqlite_nio_sqlite3_value_bytes(sqlite3_value *);
void sqlite_nio_sqlite3_result_int64(sqlite3_context *, sqlite3_int64);
void sqlite_nio_sqlite3_result_double(sqlite3_context *, double);
void sqlite_nio_sqlite3_result_null(sqlite3_context *);
void sqlite_nio_sqlite3_result_error(sqlite3_context *, const char *, int);
int sqlite_nio_sqlite3_create_function_v2(
    sqlite3 *db, const char *zFunctionName, int nArg, int eTextRep, void *pApp,
    void (*xFunc)(sqlite3_context *, int, sqlite3_value **), void (*xStep)(sqlite3_context *, int, sqlite3_value **),
    void (*xFinal)(sqlite3_context *), void (*xDestroy)(void *));

/// Registers `parsley_holds_any(list, principals)`, the one-pass test of a permission list (see parsley_sqlite.c).
int parsley_sqlite_install_permission_test(sqlite3 *db);

/// After each commit of `db`, writes the WAL's length in pages to `*pages` (SQLite's WAL hook). This replaces the
/// connection's automatic checkpoint: whoever watches the count checkpoints.
void parsley_sqlite_watch_wal(sqlite3 *db, int *pages);

/// Binds UTF-8 text, letting SQLite copy it (SQLITE_TRANSIENT).
int parsley_sqlite_bind_text(sqlite3_stmt *stmt, int index, const char *text, int length);

#endif
