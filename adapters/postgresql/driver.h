// The only libpq-facing code besides errors.cc: connections, results, binary parameters,
// binary COPY and pipelines.
//
// libpq is used directly rather than through libpqxx 6.4: the hot paths need binary
// result formats, pipeline mode and binary COPY, none of which libpqxx 6.4 offers, and it
// does not hand out its PGconn (see docs/postgresql.md).
#pragma once

#include <libpq-fe.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "adapters/postgresql/errors.h"

namespace relstore::backend {
class Adapter;
}

namespace relstore::postgresql {

// A statement prepared once per connection under `name`; an empty name runs it unprepared.
struct Statement {
  const char* name;
  const char* sql;
};

// Up to sixteen parameters, sent in binary form.
class Params {
 public:
  static constexpr int kMax = 16;
  Params& int64(int64_t v);
  Params& boolean(bool v);
  // bytea (binary); the bytes must stay alive until the statement is sent.
  Params& bytes(std::string_view v);
  Params& null();

  int size() const { return n_; }
  const char* const* values() const { return values_.data(); }
  const int* lengths() const { return lengths_.data(); }
  const int* formats() const { return formats_.data(); }

 private:
  int n_ = 0;
  std::array<const char*, kMax> values_{};
  std::array<int, kMax> lengths_{};
  std::array<int, kMax> formats_{};
  std::array<std::array<char, 8>, kMax> ints_{};
};

// An owned PGresult; binary and text columns read the same way.
class Result {
 public:
  Result() = default;
  explicit Result(PGresult* r) : r_(r) {}

  int rows() const { return r_ ? PQntuples(r_.get()) : 0; }
  int columns() const { return r_ ? PQnfields(r_.get()) : 0; }
  // Rows an INSERT, UPDATE or DELETE changed (0 for other statements).
  uint64_t affected() const { return r_ ? std::strtoull(PQcmdTuples(r_.get()), nullptr, 10) : 0; }
  bool is_null(int row, int col) const { return PQgetisnull(r_.get(), row, col) != 0; }
  // An integer or boolean column (NULL reads as `if_null`).
  int64_t int64(int row, int col, int64_t if_null = 0) const;
  // A bytea or text column as raw bytes.
  std::string bytes(int row, int col) const;
  std::optional<std::string> optional_bytes(int row, int col) const {
    if (is_null(row, col)) return std::nullopt;
    return bytes(row, col);
  }

 private:
  struct Free {
    void operator()(PGresult* r) const { PQclear(r); }
  };
  std::unique_ptr<PGresult, Free> r_;
};

// Writes the rows of a binary COPY ... FROM STDIN, buffering small fields.
class CopyWriter {
 public:
  void begin_row(int16_t fields);
  void int64(int64_t v);
  void boolean(bool v);
  void bytes(std::string_view v);
  void null();

 private:
  friend class Conn;
  explicit CopyWriter(PGconn* conn);
  void append(const void* p, size_t n);
  void flush();
  void finish();  // trailer, then flush

  PGconn* conn_;
  std::string buf_;
};
using CopyProducer = std::function<void(CopyWriter&)>;

// A one-dimensional array in PostgreSQL's binary format, for a Params::bytes parameter
// whose SQL type is `element`[] (the server checks the element type).
class BinaryArray {
 public:
  enum Element : uint32_t { kInt8 = 20, kBytea = 17, kText = 25 };
  explicit BinaryArray(Element element);
  BinaryArray& int64(int64_t v);
  BinaryArray& bytes(std::string_view v);  // bytea or text (UTF-8) elements
  BinaryArray& null();
  // The encoded array; stays valid while this object lives and is not appended to.
  std::string_view data();

 private:
  Element element_;
  int32_t count_ = 0;
  bool has_null_ = false;
  std::string buf_;
};

// libpq connection parameters as (keyword, value) pairs, and the redacted URI that names
// the database in messages.
struct ConnectSpec {
  std::vector<std::pair<std::string, std::string>> params;
  std::string describe;
};

// The connection parameter keywords this libpq accepts (host, sslmode, connect_timeout, …).
std::vector<std::string> libpq_keywords();

// One server connection. Not thread-safe.
class Conn {
 public:
  // Connects; throws the translated error (which never shows the password). `counter`,
  // when given, is told about every round trip.
  Conn(const ConnectSpec& spec, backend::Adapter* counter);
  ~Conn();
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  // False once the connection is known to be unusable.
  bool ok() const { return !broken_ && PQstatus(conn_) == CONNECTION_OK; }
  // Also notices, without blocking, a connection the server closed while it was idle.
  bool still_open();
  // Whether a transaction is open (or failed and not yet rolled back).
  bool in_transaction() const;
  const std::string& describe() const { return describe_; }
  int backend_pid() const { return PQbackendPID(conn_); }

  // Simple-query protocol: one or more ";"-separated statements sent in one message, text
  // results. `copy` provides the rows of a COPY ... FROM STDIN among them. One round trip,
  // plus one for the COPY. Throws the first error after reading every result.
  std::vector<Result> simple(std::string_view sql, Context ctx, const CopyProducer* copy = nullptr);

  // Rolls back an open (or failed) transaction, if any; never throws. A connection that
  // cannot even do that is marked broken.
  void rollback_quietly() noexcept;

  // Extended protocol, binary parameters and results; one round trip.
  Result run(const Statement& s, const Params& p, Context ctx);
  // Prepares named statements, all in one round trip.
  void prepare(const std::vector<Statement>& statements);

  // --- pipeline mode: batches are sent without waiting, results are read later ---
  void enter_pipeline();
  // Leaves pipeline mode; every batch must have been read.
  void exit_pipeline();
  // exit_pipeline after an error was thrown (every result was read before it was); a
  // connection that cannot leave pipeline mode is marked broken and never reused.
  void exit_pipeline_quietly() noexcept;
  void queue(const Statement& s, const Params& p = Params());
  // Closes the queued statements into a batch and sends it; does not wait.
  void send_batch();
  // Reads the results of every batch sent and returns the last batch's, one per
  // statement. One round trip when anything is outstanding. Throws for an error in the
  // last batch (earlier batches were sent without anyone waiting for them).
  std::vector<Result> wait(Context ctx);

  // Waits up to `seconds` for a notification on a channel this connection LISTENs to.
  // True when one or more arrived (all are consumed); false on timeout. Outside pipelines.
  bool wait_for_notification(double seconds);

 private:
  void count_round_trip();
  [[noreturn]] void fail(const PGresult* res, Context ctx);
  // The connection broke while results were outstanding.
  [[noreturn]] void lost(Context ctx);
  void send_statement(const Statement& s, const Params& p);

  PGconn* conn_ = nullptr;
  backend::Adapter* counter_;
  std::string describe_;
  bool broken_ = false;
  bool pipeline_ = false;
  int queued_ = 0;           // statements queued since the last send_batch
  std::deque<int> batches_;  // statements per batch sent and not yet read
};

}  // namespace relstore::postgresql
