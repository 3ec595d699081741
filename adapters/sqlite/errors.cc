#include "adapters/sqlite/errors.h"

#include <string>

#include "relstore/errors.h"

namespace relstore::sqlite {

void throw_error(int rc, std::string_view message, Context ctx, std::string_view what) {
  const std::string text =
      std::string(what) + ": " + std::string(message) + " (SQLite code " + std::to_string(rc) + ")";
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      // The write lock is both the commit lock and every object lock (design.md §3).
      if (ctx == Context::vote || ctx == Context::commit) {
        throw UnableToAcquireCommitLockError("could not take the SQLite write lock in time: " +
                                             text);
      }
      throw DisconnectedError("the SQLite database is busy: " + text);
    case SQLITE_NOTADB:
      throw SchemaError("not a SQLite database: " + text);
    case SQLITE_CORRUPT:
      throw StorageError("the SQLite database is corrupt: " + text);
    case SQLITE_CANTOPEN:
      throw StorageError("cannot open: " + text);
    case SQLITE_READONLY:
      // SQLite creates files beside the database: a WAL database's -shm, which even a
      // reader needs, or a journal.
      if (rc == SQLITE_READONLY_DIRECTORY || rc == SQLITE_READONLY_CANTINIT) {
        throw StorageError(
            "SQLite cannot create a file it needs beside the database (the -shm file of a "
            "WAL database, which readers need too, or a journal): this user may not write "
            "its directory. Give write access to the directory, or read a copy that nothing "
            "changes with ?immutable=1: " +
            text);
      }
      throw ReadOnlyError("the SQLite database is read-only: " + text);
    case SQLITE_PERM:
    case SQLITE_AUTH:
      throw StorageError("permission denied: " + text);
    case SQLITE_FULL:
      throw StorageError("the disk is full: " + text);
    case SQLITE_IOERR:
      throw StorageError("I/O error: " + text);
    case SQLITE_CONSTRAINT:
      throw StorageError("constraint violated: " + text);
    case SQLITE_ERROR:
      if (message.find("no such table") != std::string_view::npos) {
        throw SchemaError("the database lacks a table relstore needs: " + text);
      }
      break;
    default:
      break;
  }
  throw StorageError(text);
}

void throw_db_error(int rc, sqlite3* db, Context ctx, std::string_view what) {
  throw_error(rc, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc), ctx, what);
}

}  // namespace relstore::sqlite
