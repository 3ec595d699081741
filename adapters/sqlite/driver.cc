#include "adapters/sqlite/driver.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>

#include "adapters/sqlite/errors.h"
#include "relstore/errors.h"
#include "relstore/types.h"

namespace relstore::sqlite {

Stmt::Stmt(sqlite3* db, std::string_view sql, bool persistent) : db_(db) {
  const int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                                    persistent ? SQLITE_PREPARE_PERSISTENT : 0, &stmt_, nullptr);
  if (rc != SQLITE_OK) throw_db_error(rc, db, Context::other, "preparing " + std::string(sql));
}

Stmt::~Stmt() { sqlite3_finalize(stmt_); }

// A bind SQLite refuses leaves the parameter NULL, which in object_state means "deleted":
// never let one pass. (SQLITE_TOOBIG: a value over SQLITE_LIMIT_LENGTH, 1e9 bytes by
// default.)
void Stmt::check_bind(int rc, int index, size_t size, const std::string& what) const {
  if (rc == SQLITE_OK) return;
  std::string message =
      "SQLite refused " + (what.empty() ? "parameter " + std::to_string(index) : what);
  if (rc == SQLITE_TOOBIG) {
    message += ": " + std::to_string(size) + " bytes, more than SQLite's limit of " +
               std::to_string(sqlite3_limit(db_, SQLITE_LIMIT_LENGTH, -1)) + " bytes";
  } else {
    message += std::string(": ") + sqlite3_errstr(rc);
  }
  throw StorageError(message + " (in " + sqlite3_sql(stmt_) + ")");
}

Stmt& Stmt::bind(int index, int64_t value) {
  check_bind(sqlite3_bind_int64(stmt_, index, value), index, 0);
  return *this;
}

Stmt& Stmt::bind_blob(int index, std::string_view value) {
  // SQLITE_STATIC: callers keep the bytes alive until the statement is stepped.
  check_bind(sqlite3_bind_blob64(stmt_, index, value.data(), value.size(), SQLITE_STATIC), index,
             value.size());
  return *this;
}

Stmt& Stmt::bind_zeroblob(int index, uint64_t size) {
  check_bind(sqlite3_bind_zeroblob64(stmt_, index, size), index, size);
  return *this;
}

IncrementalBlob::IncrementalBlob(sqlite3* db, const char* table, const char* column, int64_t rowid,
                                 bool writable)
    : db_(db) {
  const int rc = sqlite3_blob_open(db, "main", table, column, rowid, writable ? 1 : 0, &blob_);
  if (rc != SQLITE_OK) {
    sqlite3_blob_close(blob_);  // a handle SQLite may have set; closing nullptr is harmless
    throw_db_error(
        rc, db, Context::other,
        std::string("opening ") + table + "." + column + " of row " + std::to_string(rowid));
  }
}

IncrementalBlob::~IncrementalBlob() { sqlite3_blob_close(blob_); }

void IncrementalBlob::read_all(size_t piece, const std::function<void(std::string_view)>& sink) {
  const uint64_t total = size();
  std::string buf;
  uint64_t at = 0;
  do {  // an empty value gives one empty piece
    buf.resize(static_cast<size_t>(std::min<uint64_t>(piece, total - at)));
    const int rc =
        sqlite3_blob_read(blob_, buf.data(), static_cast<int>(buf.size()), static_cast<int>(at));
    if (rc != SQLITE_OK) throw_db_error(rc, db_, Context::read, "reading a blob");
    sink(buf);
    at += buf.size();
  } while (at < total);
}

void IncrementalBlob::write(uint64_t offset, std::string_view bytes) {
  const int rc = sqlite3_blob_write(blob_, bytes.data(), static_cast<int>(bytes.size()),
                                    static_cast<int>(offset));
  if (rc != SQLITE_OK) throw_db_error(rc, db_, Context::commit, "writing a blob");
}

Stmt& Stmt::bind_state(int index, std::string_view state, uint64_t oid) {
  const int rc = sqlite3_bind_blob64(stmt_, index, state.data(), state.size(), SQLITE_STATIC);
  if (rc != SQLITE_OK) check_bind(rc, index, state.size(), "the state of oid " + Oid(oid).hex());
  return *this;
}

Stmt& Stmt::bind_text(int index, std::string_view value) {
  check_bind(
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_STATIC, SQLITE_UTF8),
      index, value.size());
  return *this;
}

Stmt& Stmt::bind_null(int index) {
  check_bind(sqlite3_bind_null(stmt_, index), index, 0);
  return *this;
}

bool Stmt::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  const std::string sql = sqlite3_sql(stmt_);
  sqlite3_reset(stmt_);
  throw_db_error(rc, db_, Context::other, "executing " + sql);
}

void Stmt::run() {
  StmtScope scope(*this);
  while (step()) {
  }
}

void Stmt::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string Stmt::blob(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  const int n = sqlite3_column_bytes(stmt_, col);
  return p ? std::string(static_cast<const char*>(p), static_cast<size_t>(n)) : std::string();
}

Db::Db(const std::string& path, int flags) : path_(path) {
  const int rc = sqlite3_open_v2(path.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw_error(rc, msg, Context::open, path);
  }
  sqlite3_extended_result_codes(db_, 1);
}

Db::~Db() {
  cache_.clear();
  sqlite3_close_v2(db_);
}

void Db::exec(std::string_view sql) {
  const std::string text(sql);
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    const std::string msg = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    throw_error(rc, msg, Context::other, path_ + ": " + text.substr(0, 200));
  }
}

Stmt& Db::prepared(const char* sql) {
  auto& slot = cache_[sql];
  if (!slot) slot = std::make_unique<Stmt>(db_, sql, true);
  return *slot;
}

int64_t Db::query_int(const char* sql, int64_t if_null) {
  Stmt& s = prepared(sql);
  StmtScope scope(s);
  if (!s.step() || s.is_null(0)) return if_null;
  return s.int64(0);
}

void Db::rollback_quietly() noexcept {
  if (!in_transaction()) return;
  try {
    exec("ROLLBACK");
  } catch (...) {
    // The error being handled is the one to report.
  }
}

bool Db::has_table(std::string_view name) {
  Stmt& s = prepared("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
  StmtScope scope(s);
  s.bind_text(1, name);
  return s.step();
}

namespace {

// SQLite's default busy handler sleeps in steps of up to 100 ms, which turns a short wait
// for the write lock into a long one when several processes commit. Retry quickly at
// first and back off to 5 ms, until the deadline.
int busy_handler(void* arg, int attempt) {
  const auto* timeout_ms = static_cast<const double*>(arg);
  // Delays double from 50 µs up to 5 ms; `waited` is their sum over earlier attempts.
  const double delay_us = attempt < 7 ? 50.0 * (1 << attempt) : 5000.0;
  const double waited_us =
      attempt <= 7 ? 50.0 * ((1 << attempt) - 1) : 6350.0 + (attempt - 7) * 5000.0;
  if (waited_us / 1000 >= *timeout_ms) return 0;
  std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(delay_us)));
  return 1;
}

}  // namespace

void Db::set_busy_timeout(double seconds) {
  busy_timeout_ms_ = seconds * 1000;
  sqlite3_busy_handler(db_, busy_handler, &busy_timeout_ms_);
}

namespace {

// A URI filename (SQLite's "file:" form) for `path`, which may hold '?', '#' or '%'.
std::string uri_filename(const std::string& path) {
  std::string out = "file:";
  for (unsigned char c : path) {
    if (c == '?' || c == '#' || c == '%' || c < 0x20 || c >= 0x7f) {
      static constexpr char kHex[] = "0123456789ABCDEF";
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace

std::unique_ptr<Db> open_for_reading(const std::string& path, bool immutable) {
  if (immutable) {
    std::error_code ec;
    const auto wal_size = std::filesystem::file_size(path + "-wal", ec);
    if (!ec && wal_size > 0) {
      throw StorageError(path + "-wal is not empty: it may hold commits not yet in " + path +
                         ", which immutable=1 would not see. Open the database without it "
                         "where SQLite may create " +
                         path +
                         "-shm, or checkpoint it there (PRAGMA wal_checkpoint(TRUNCATE)) "
                         "before reading the copy");
    }
    return std::make_unique<Db>(uri_filename(path) + "?immutable=1",
                                SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
  }
  try {
    return std::make_unique<Db>(path, SQLITE_OPEN_READWRITE);
  } catch (const ReadOnlyError&) {
  } catch (const StorageError& e) {
    if (std::string(e.what()).find("cannot open") == std::string::npos) throw;
  }
  return std::make_unique<Db>(path, SQLITE_OPEN_READONLY);
}

}  // namespace relstore::sqlite
