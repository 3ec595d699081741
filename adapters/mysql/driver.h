// The only MySQL-facing code besides errors.cc: a connection over mysql-connector-c++ 1.1
// (cppconn) with one-round-trip multi-statement batches and cached prepared statements.
// cppconn types are only forward-declared here so that its Boost-heavy headers stay in
// driver.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "adapters/mysql/errors.h"

namespace sql {
class Connection;
class PreparedStatement;
class ResultSet;
class Statement;
}  // namespace sql

namespace relstore::backend {
class Adapter;
}

namespace relstore::mysql {

struct ConnectParams {
  std::string host = "localhost";
  int port = 3306;
  std::string unix_socket;  // when set, used instead of host and port
  std::string user;
  std::string password;
  std::string database;  // empty: connect without choosing one
  // Driver settings from the URI (connect_timeout, ssl_ca, …), validated by the adapter.
  std::map<std::string, std::string> options;
  std::string describe;  // the redacted URI, for messages
};

// The rows of one result set, valid during the callback that receives them. Columns
// count from 0.
class Rows {
 public:
  explicit Rows(sql::ResultSet& rs) : rs_(rs) {}
  bool next();
  bool is_null(int col) const;
  int columns() const;
  int64_t int64(int col) const;
  std::string bytes(int col) const;
  std::optional<std::string> optional_bytes(int col) const {
    if (is_null(col)) return std::nullopt;
    return bytes(col);
  }

 private:
  sql::ResultSet& rs_;
};

using RowsCallback = std::function<void(Rows&)>;

class Connection;

// A server-side prepared statement, reused for the life of its connection.
class Prepared {
 public:
  Prepared(Connection& conn, std::string_view sql);
  ~Prepared();
  Prepared(const Prepared&) = delete;
  Prepared& operator=(const Prepared&) = delete;

  // Parameters count from 1.
  Prepared& bind(int index, int64_t value);
  // Executes in one round trip; `on_rows` sees the result set.
  void query(const RowsCallback& on_rows, Context ctx = Context::read);

 private:
  Connection& conn_;
  std::unique_ptr<sql::PreparedStatement> stmt_;
};

class Connection {
 public:
  // Connects (multi-statements on, utf8mb4) and runs `init`, a batch of `init_statements`
  // session settings, in the same go. Round trips are reported to `counter` if given.
  Connection(const ConnectParams& params, std::string_view init, int init_statements,
             backend::Adapter* counter);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Sends `sql`, holding `statements` statements separated by ';', in one round trip and
  // hands every result set to `on_rows` in order. A procedure CALL counts as one
  // statement whatever result sets it returns.
  // Errors name `what`, or the start of `sql` when it is empty.
  void batch(std::string_view sql, int statements, const RowsCallback& on_rows, Context ctx,
             std::string_view what = {});
  void batch(std::string_view sql, int statements, Context ctx, std::string_view what = {}) {
    batch(sql, statements, nullptr, ctx, what);
  }
  // One statement without results.
  void exec(std::string_view sql, Context ctx = Context::other, std::string_view what = {}) {
    batch(sql, 1, ctx, what);
  }
  // Runs a query whose first column of its first row is an integer (NULL: `if_null`).
  int64_t query_int(std::string_view sql, int64_t if_null = 0, Context ctx = Context::read);
  // A statement prepared once per connection; `sql` must outlive the connection (it is
  // cached by the literal's address).
  Prepared& prepared(const char* sql);

  // False once the connection was lost; the caller must then drop it.
  bool healthy() const { return healthy_; }
  const ConnectParams& params() const { return params_; }

  // Translates a driver exception (rethrown from a catch block) into a relstore error,
  // marking the connection broken when the server is gone.
  [[noreturn]] void fail(Context ctx, std::string_view what);
  void count_round_trip();
  // ROLLBACK for cleanup paths, followed by the statements set with
  // also_on_rollback. Never throws: a failure marks the connection broken, so that nothing
  // reuses a connection whose transaction state is unknown.
  void rollback() noexcept;
  // Statements every rollback runs after ROLLBACK, in the same round trip: emptying
  // temporary tables that a ROLLBACK does not empty.
  void also_on_rollback(std::string sql, int statements) {
    rollback_extra_ = std::move(sql);
    rollback_extra_statements_ = statements;
  }
  // The same without counting a round trip, for the snapshot closer: nobody waits for it.
  void rollback_uncounted() noexcept;

  sql::Connection& raw() { return *conn_; }

 private:
  // Reads every result of a batch of `statements` statements whose execute() returned
  // `has_rows`.
  void read_results(bool has_rows, int statements, const RowsCallback& on_rows);

  ConnectParams params_;
  backend::Adapter* counter_;
  std::unique_ptr<sql::Connection> conn_;
  std::unique_ptr<sql::Statement> stmt_;
  std::map<const char*, std::unique_ptr<Prepared>> cache_;
  bool healthy_ = true;
  std::string rollback_extra_;
  int rollback_extra_statements_ = 0;
};

// `sql` without trailing blanks and semicolon, so that it can be joined into a batch (a
// statement left empty after the last ';' is an error).
std::string trim_statements(std::string_view sql);

// Replaces every `from` in `s` (a placeholder such as {SHARE_LOCK} in sql/mysql/).
void replace_all(std::string& s, std::string_view from, std::string_view to);

// Appends `bytes` as a binary string literal (_binary'…' with backslash escapes). Sessions
// set sql_mode without NO_BACKSLASH_ESCAPES, so the escapes are always honoured.
void append_binary_literal(std::string& out, std::string_view bytes);
// The length append_binary_literal would add, for packet size planning.
size_t binary_literal_size(std::string_view bytes);
// The same with only the escapes a quoted string needs (backslash, quote, NUL), for text
// that has many double quotes and no line breaks (JSON).
void append_lean_literal(std::string& out, std::string_view bytes);
size_t lean_literal_size(std::string_view bytes);

}  // namespace relstore::mysql
