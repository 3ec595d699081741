#include "adapters/mysql/driver.h"

#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/resultset_metadata.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>
#include <mysql_driver.h>

#include <cctype>
#include <cstdlib>
#include <limits>

#include "backend/adapter.h"
#include "option_values.h"
#include "relstore/errors.h"

namespace relstore::mysql {
namespace {

// Whole seconds: atoi took "10s" as 10 and "ten" as 0, no wait at all.
int seconds_option(const std::string& key, const std::string& value) {
  const double seconds = parse_number(key, value);
  if (seconds > std::numeric_limits<int>::max() ||
      seconds != static_cast<double>(static_cast<int>(seconds))) {
    throw ConfigError("option " + key + ": expected whole seconds, got '" + value + "'");
  }
  return static_cast<int>(seconds);
}

sql::mysql::MySQL_Driver& driver() {
  // The first call initialises the client library; a function-local static makes that
  // thread-safe.
  static sql::mysql::MySQL_Driver* d = sql::mysql::get_mysql_driver_instance();
  return *d;
}

// URI options that map onto cppconn connect options, by their relstore name.
const std::map<std::string, std::string>& string_options() {
  static const std::map<std::string, std::string> m = {
      {"ssl_ca", "sslCA"},   {"ssl_capath", "sslCAPath"}, {"ssl_cert", "sslCert"},
      {"ssl_key", "sslKey"}, {"ssl_cipher", "sslCipher"}, {"ssl_crl", "sslCRL"},
  };
  return m;
}

sql::ConnectOptionsMap connect_options(const ConnectParams& p) {
  sql::ConnectOptionsMap o;
  if (!p.unix_socket.empty()) {
    o["hostName"] = sql::SQLString("localhost");
    o["socket"] = sql::SQLString(p.unix_socket);
  } else if (p.host.find(':') != std::string::npos) {
    // The connector splits a bare host at its first ':'; an IPv6 address goes in brackets
    // of a tcp:// host, with the port.
    o["hostName"] = sql::SQLString("tcp://[" + p.host + "]:" + std::to_string(p.port));
  } else {
    o["hostName"] = sql::SQLString(p.host);
    o["port"] = p.port;
  }
  o["userName"] = sql::SQLString(p.user);
  o["password"] = sql::SQLString(p.password);
  if (!p.database.empty()) o["schema"] = sql::SQLString(p.database);
  o["CLIENT_MULTI_STATEMENTS"] = true;
  o["OPT_CHARSET_NAME"] = sql::SQLString("utf8mb4");
  // The client's own limit on packets it reads (the server's max_allowed_packet bounds
  // what can be stored); the protocol maximum, so that any stored record can be read.
  o["OPT_MAX_ALLOWED_PACKET"] = 1 << 30;
  int connect_timeout = 10;
  for (const auto& [key, value] : p.options) {
    if (key == "connect_timeout") {
      connect_timeout = seconds_option(key, value);
    } else if (key == "read_timeout") {
      o["OPT_READ_TIMEOUT"] = seconds_option(key, value);
    } else if (key == "write_timeout") {
      o["OPT_WRITE_TIMEOUT"] = seconds_option(key, value);
    } else if (key == "compress") {
      o["CLIENT_COMPRESS"] = parse_bool(key, value);
    } else if (key == "ssl_verify") {
      o["sslVerify"] = parse_bool(key, value);
    } else if (auto it = string_options().find(key); it != string_options().end()) {
      o[it->second] = sql::SQLString(value);
    }
  }
  o["OPT_CONNECT_TIMEOUT"] = connect_timeout;
  return o;
}

}  // namespace

// ---------------------------------------------------------------- Rows

bool Rows::next() { return rs_.next(); }
bool Rows::is_null(int col) const { return rs_.isNull(static_cast<uint32_t>(col + 1)); }
int Rows::columns() const { return static_cast<int>(rs_.getMetaData()->getColumnCount()); }
int64_t Rows::int64(int col) const { return rs_.getInt64(static_cast<uint32_t>(col + 1)); }
std::string Rows::bytes(int col) const {
  return rs_.getString(static_cast<uint32_t>(col + 1)).asStdString();
}

// ---------------------------------------------------------------- Prepared

Prepared::Prepared(Connection& conn, std::string_view sql) : conn_(conn) {
  conn_.count_round_trip();
  try {
    stmt_.reset(conn_.raw().prepareStatement(sql::SQLString(sql.data(), sql.size())));
  } catch (...) {
    conn_.fail(Context::other, "preparing " + std::string(sql));
  }
}

Prepared::~Prepared() = default;

Prepared& Prepared::bind(int index, int64_t value) {
  stmt_->setInt64(static_cast<unsigned int>(index), value);
  return *this;
}

void Prepared::query(const RowsCallback& on_rows, Context ctx) {
  conn_.count_round_trip();
  try {
    std::unique_ptr<sql::ResultSet> rs(stmt_->executeQuery());
    Rows rows(*rs);
    on_rows(rows);
  } catch (const StorageError&) {
    throw;  // from the callback
  } catch (...) {
    conn_.fail(ctx, conn_.params().describe);
  }
}

// ---------------------------------------------------------------- Connection

Connection::Connection(const ConnectParams& params, std::string_view init, int init_statements,
                       backend::Adapter* counter)
    : params_(params), counter_(counter) {
  try {
    sql::ConnectOptionsMap options = connect_options(params_);
    conn_.reset(driver().connect(options));
    stmt_.reset(conn_->createStatement());
  } catch (...) {
    fail(Context::connect, "cannot connect to " + params_.describe);
  }
  if (!init.empty()) batch(init, init_statements, Context::connect);
}

Connection::~Connection() {
  cache_.clear();
  stmt_.reset();
  try {
    if (conn_) conn_->close();
  } catch (...) {
    // Closing a lost connection can fail; there is nothing left to release.
  }
}

void Connection::count_round_trip() {
  if (counter_) counter_->count_round_trip();
}

void Connection::rollback() noexcept {
  count_round_trip();
  rollback_uncounted();
}

void Connection::rollback_uncounted() noexcept {
  try {
    const std::string sql =
        rollback_extra_.empty() ? std::string("ROLLBACK") : "ROLLBACK; " + rollback_extra_;
    read_results(stmt_->execute(sql::SQLString(sql)), 1 + rollback_extra_statements_, nullptr);
  } catch (...) {
    healthy_ = false;  // lost, or in a state we cannot trust: the owner reconnects
  }
}

void Connection::fail(Context ctx, std::string_view what) {
  try {
    throw;
  } catch (const sql::SQLException& e) {
    if (is_disconnect(e.getErrorCode())) healthy_ = false;
    throw_error(e.getErrorCode(), e.what(), ctx, what);
  } catch (const StorageError&) {
    throw;
  } catch (const std::exception& e) {
    healthy_ = false;  // a driver state we do not understand: do not reuse the connection
    throw StorageError(std::string(what) + ": " + e.what());
  }
}

void Connection::batch(std::string_view sql, int statements, const RowsCallback& on_rows,
                       Context ctx, std::string_view what) {
  count_round_trip();
  try {
    read_results(stmt_->execute(sql::SQLString(sql.data(), sql.size())), statements, on_rows);
  } catch (const StorageError&) {
    // Thrown by the callback: the remaining results are unread, so the connection is out
    // of step with the server.
    healthy_ = false;
    throw;
  } catch (...) {
    fail(ctx, params_.describe + ": " +
                  (what.empty() ? std::string(sql.substr(0, 200)) : std::string(what)));
  }
}

void Connection::read_results(bool has_rows, int statements, const RowsCallback& on_rows) {
  // cppconn's getMoreResults() returns false both at the end and for a result without
  // rows (each statement's status, a CALL's final status), and exposes no "more results"
  // flag. A batch has at most `statements` such results in a row, so that many plus one
  // consecutive falses means every result was read; further calls are local no-ops.
  int consecutive_empty = 0;
  for (;;) {
    if (has_rows) {
      consecutive_empty = 0;
      std::unique_ptr<sql::ResultSet> rs(stmt_->getResultSet());
      if (on_rows) {
        Rows rows(*rs);
        on_rows(rows);
      }
    } else if (++consecutive_empty > statements) {
      break;
    }
    has_rows = stmt_->getMoreResults();
  }
}

int64_t Connection::query_int(std::string_view sql, int64_t if_null, Context ctx) {
  int64_t out = if_null;
  batch(
      sql, 1,
      [&](Rows& r) {
        if (r.next() && !r.is_null(0)) out = r.int64(0);
      },
      ctx);
  return out;
}

Prepared& Connection::prepared(const char* sql) {
  auto& slot = cache_[sql];
  if (!slot) slot = std::make_unique<Prepared>(*this, sql);
  return *slot;
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) {
    s.replace(pos, from.size(), to);
  }
}

std::string trim_statements(std::string_view sql) {
  while (!sql.empty() &&
         (std::isspace(static_cast<unsigned char>(sql.back())) || sql.back() == ';')) {
    sql.remove_suffix(1);
  }
  return std::string(sql);
}

// ---------------------------------------------------------------- literals

size_t binary_literal_size(std::string_view bytes) {
  size_t n = 9;  // _binary''
  for (char c : bytes) {
    switch (c) {
      case '\0':
      case '\n':
      case '\r':
      case '\\':
      case '\'':
      case '"':
      case '\x1a':
        n += 2;
        break;
      default:
        n += 1;
    }
  }
  return n;
}

void append_binary_literal(std::string& out, std::string_view bytes) {
  out += "_binary'";
  for (char c : bytes) {
    switch (c) {
      case '\0':
        out += "\\0";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\'':
        out += "\\'";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\x1a':
        out += "\\Z";
        break;
      default:
        out += c;
    }
  }
  out += '\'';
}

size_t lean_literal_size(std::string_view bytes) {
  size_t n = 9 + bytes.size();  // _binary''
  for (char c : bytes) n += (c == '\\' || c == '\'' || c == '\0');
  return n;
}

void append_lean_literal(std::string& out, std::string_view bytes) {
  out += "_binary'";
  size_t start = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (c != '\\' && c != '\'' && c != '\0') continue;
    out.append(bytes.data() + start, i - start);
    out += c == '\0' ? "\\0" : c == '\\' ? "\\\\" : "\\'";
    start = i + 1;
  }
  out.append(bytes.data() + start, bytes.size() - start);
  out += '\'';
}

}  // namespace relstore::mysql
