// The only SQLite-facing code besides errors.cc: RAII connection and statement wrappers.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace relstore::sqlite {

class Stmt {
 public:
  Stmt(sqlite3* db, std::string_view sql, bool persistent);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& bind(int index, int64_t value);
  Stmt& bind_blob(int index, std::string_view value);
  // A BLOB of `size` zero bytes, to be filled through IncrementalBlob.
  Stmt& bind_zeroblob(int index, uint64_t size);
  // An object's state: as bind_blob, and an error names the object.
  Stmt& bind_state(int index, std::string_view state, uint64_t oid);
  Stmt& bind_text(int index, std::string_view value);
  Stmt& bind_null(int index);
  // Advances; true while a row is available. Throws a translated StorageError.
  bool step();
  // Steps to completion, ignoring rows, then resets.
  void run();
  void reset();

  int64_t int64(int col) const { return sqlite3_column_int64(stmt_, col); }
  bool is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string blob(int col) const;
  // None for SQL NULL.
  std::optional<std::string> optional_blob(int col) const {
    if (is_null(col)) return std::nullopt;
    return blob(col);
  }

 private:
  // Throws unless `rc` is SQLITE_OK; `what` names the value (default: its position).
  void check_bind(int rc, int index, size_t size, const std::string& what = {}) const;

  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// Resets a statement when the scope ends, so an exception never leaves it mid-step.
class StmtScope {
 public:
  explicit StmtScope(Stmt& s) : s_(s) {}
  ~StmtScope() { s_.reset(); }
  Stmt& operator*() { return s_; }
  Stmt* operator->() { return &s_; }

 private:
  Stmt& s_;
};

// A BLOB value read or written in pieces (sqlite3_blob_*), so that a large one never sits
// in memory whole: column `column` of row `rowid` of `table`, inside the caller's
// transaction.
class IncrementalBlob {
 public:
  IncrementalBlob(sqlite3* db, const char* table, const char* column, int64_t rowid, bool writable);
  ~IncrementalBlob();
  IncrementalBlob(const IncrementalBlob&) = delete;
  IncrementalBlob& operator=(const IncrementalBlob&) = delete;

  uint64_t size() const { return static_cast<uint64_t>(sqlite3_blob_bytes(blob_)); }
  // Reads the whole value into `sink` in pieces of at most `piece` bytes.
  void read_all(size_t piece, const std::function<void(std::string_view)>& sink);
  void write(uint64_t offset, std::string_view bytes);

 private:
  sqlite3* db_;
  sqlite3_blob* blob_ = nullptr;
};

class Db {
 public:
  // Opens `path` with sqlite3_open_v2 flags; throws a translated StorageError naming it.
  Db(const std::string& path, int flags);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  void exec(std::string_view sql);
  // A statement prepared once per connection and reused, cached by the address of `sql`:
  // a literal (a built std::string would reuse the statement of an earlier text).
  Stmt& prepared(const char* sql);
  // Runs a query returning one integer (NULL as `if_null`); `sql` as for prepared().
  int64_t query_int(const char* sql, int64_t if_null = 0);
  // Whether SQLite opened the main database read-only (it does so, silently, for a file
  // opened read-write that this process may not write).
  bool read_only() const { return sqlite3_db_readonly(db_, "main") == 1; }
  // Whether the main database has a table of that name (tables a migration adds).
  bool has_table(std::string_view name);
  void set_busy_timeout(double seconds);
  bool in_transaction() const { return sqlite3_get_autocommit(db_) == 0; }
  // Ends the open transaction, if any, on an error path: SQLite has already rolled back by
  // itself after some errors (a full disk, I/O), and a ROLLBACK then would throw "no
  // transaction is active" in place of the error that matters.
  void rollback_quietly() noexcept;
  // Rows the last INSERT, UPDATE or DELETE changed.
  int64_t changes() const { return sqlite3_changes64(db_); }
  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
  double busy_timeout_ms_ = 0;                          // read by the busy handler
  std::map<const char*, std::unique_ptr<Stmt>> cache_;  // keyed by the literal's address
};

// Opens an existing database for reading only (PRAGMA query_only is the caller's). It asks
// for write access to the file when it can have it: in WAL mode a reader creates the -wal
// and -shm files, and only a connection with write access removes them again on close,
// leaving the directory as it found it.
//
// `immutable` opens it with SQLite's immutable=1: no -shm file, no locks, the WAL ignored.
// That is the only way to read a WAL database in a directory this user may not write (a
// backup on read-only media), and it is only right when nothing changes the files: a
// non-empty -wal beside it is refused, since its commits would be invisible.
std::unique_ptr<Db> open_for_reading(const std::string& path, bool immutable = false);

}  // namespace relstore::sqlite
