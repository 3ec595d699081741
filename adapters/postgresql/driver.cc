#include "adapters/postgresql/driver.h"

#include <poll.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "backend/adapter.h"
#include "relstore/errors.h"

namespace relstore::postgresql {
namespace {

constexpr ::Oid kByteaOid = 17;
constexpr ::Oid kBoolOid = 16;
constexpr size_t kCopyChunk = 64 * 1024;

void put_be(char* p, uint64_t v, int n) {
  for (int i = n - 1; i >= 0; --i) {
    p[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}

uint64_t get_be(const char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// Server notices (e.g. "there is no transaction in progress") are expected and not ours
// to print.
void ignore_notice(void*, const char*) {}

}  // namespace

// ---------------------------------------------------------------- Params

Params& Params::int64(int64_t v) {
  put_be(ints_[n_].data(), static_cast<uint64_t>(v), 8);
  values_[n_] = ints_[n_].data();
  lengths_[n_] = 8;
  formats_[n_] = 1;
  ++n_;
  return *this;
}

Params& Params::boolean(bool v) {
  ints_[n_][0] = v ? 1 : 0;
  values_[n_] = ints_[n_].data();
  lengths_[n_] = 1;
  formats_[n_] = 1;
  ++n_;
  return *this;
}

Params& Params::bytes(std::string_view v) {
  values_[n_] = v.data();
  lengths_[n_] = static_cast<int>(v.size());
  formats_[n_] = 1;
  ++n_;
  return *this;
}

Params& Params::null() {
  values_[n_] = nullptr;
  lengths_[n_] = 0;
  formats_[n_] = 1;
  ++n_;
  return *this;
}

// ---------------------------------------------------------------- Result

int64_t Result::int64(int row, int col, int64_t if_null) const {
  if (is_null(row, col)) return if_null;
  const char* v = PQgetvalue(r_.get(), row, col);
  if (PQfformat(r_.get(), col) == 0) {
    if (PQftype(r_.get(), col) == kBoolOid) return v[0] == 't';
    return std::strtoll(v, nullptr, 10);
  }
  const int len = PQgetlength(r_.get(), row, col);
  if (len == 1) return v[0] != 0;
  const uint64_t raw = get_be(v, len);
  if (len == 8) return static_cast<int64_t>(raw);
  // Sign-extend int2 and int4.
  const int shift = 64 - 8 * len;
  return static_cast<int64_t>(raw << shift) >> shift;
}

std::string Result::bytes(int row, int col) const {
  const char* v = PQgetvalue(r_.get(), row, col);
  const size_t len = static_cast<size_t>(PQgetlength(r_.get(), row, col));
  if (PQfformat(r_.get(), col) == 0 && PQftype(r_.get(), col) == kByteaOid) {
    size_t out_len = 0;
    unsigned char* raw = PQunescapeBytea(reinterpret_cast<const unsigned char*>(v), &out_len);
    std::string out(reinterpret_cast<const char*>(raw), out_len);
    PQfreemem(raw);
    return out;
  }
  return std::string(v, len);
}

// ---------------------------------------------------------------- CopyWriter

CopyWriter::CopyWriter(PGconn* conn) : conn_(conn) {
  // Binary COPY header: signature, flags, header extension length.
  static constexpr char kSignature[] = "PGCOPY\n\377\r\n";
  append(kSignature, 11);
  static constexpr char kZeros[8] = {};
  append(kZeros, 8);
}

void CopyWriter::append(const void* p, size_t n) {
  buf_.append(static_cast<const char*>(p), n);
  if (buf_.size() >= kCopyChunk) flush();
}

void CopyWriter::flush() {
  if (buf_.empty()) return;
  if (PQputCopyData(conn_, buf_.data(), static_cast<int>(buf_.size())) != 1) {
    throw_error(error_of(nullptr, conn_), Context::vote, "sending COPY data");
  }
  buf_.clear();
}

void CopyWriter::begin_row(int16_t fields) {
  char b[2];
  put_be(b, static_cast<uint16_t>(fields), 2);
  append(b, 2);
}

void CopyWriter::int64(int64_t v) {
  char b[12];
  put_be(b, 8, 4);
  put_be(b + 4, static_cast<uint64_t>(v), 8);
  append(b, 12);
}

void CopyWriter::boolean(bool v) {
  char b[5];
  put_be(b, 1, 4);
  b[4] = v ? 1 : 0;
  append(b, 5);
}

void CopyWriter::bytes(std::string_view v) {
  char b[4];
  put_be(b, v.size(), 4);
  append(b, 4);
  if (v.size() < kCopyChunk) {
    append(v.data(), v.size());
    return;
  }
  // Large states go to libpq directly rather than through our buffer.
  flush();
  if (PQputCopyData(conn_, v.data(), static_cast<int>(v.size())) != 1) {
    throw_error(error_of(nullptr, conn_), Context::vote, "sending COPY data");
  }
}

void CopyWriter::null() {
  char b[4];
  put_be(b, 0xffffffffu, 4);
  append(b, 4);
}

void CopyWriter::finish() {
  char b[2];
  put_be(b, 0xffff, 2);
  append(b, 2);
  flush();
}

// ---------------------------------------------------------------- BinaryArray

// Header: dimensions, has-nulls flag, element type, then per dimension its length and
// lower bound; then each element as a 4-byte length and its bytes.
constexpr size_t kArrayHeader = 20;

BinaryArray::BinaryArray(Element element) : element_(element), buf_(kArrayHeader, '\0') {}

BinaryArray& BinaryArray::int64(int64_t v) {
  char b[12];
  put_be(b, 8, 4);
  put_be(b + 4, static_cast<uint64_t>(v), 8);
  buf_.append(b, 12);
  ++count_;
  return *this;
}

BinaryArray& BinaryArray::bytes(std::string_view v) {
  char b[4];
  put_be(b, v.size(), 4);
  buf_.append(b, 4);
  buf_.append(v);
  ++count_;
  return *this;
}

BinaryArray& BinaryArray::null() {
  char b[4];
  put_be(b, 0xffffffffu, 4);  // length -1
  buf_.append(b, 4);
  has_null_ = true;
  ++count_;
  return *this;
}

std::string_view BinaryArray::data() {
  char* h = buf_.data();
  put_be(h + 4, has_null_ ? 1 : 0, 4);
  put_be(h + 8, element_, 4);
  if (count_ == 0) {
    // An empty array has no dimensions.
    put_be(h, 0, 4);
    return std::string_view(buf_).substr(0, 12);
  }
  put_be(h, 1, 4);
  put_be(h + 12, static_cast<uint32_t>(count_), 4);
  put_be(h + 16, 1, 4);
  return buf_;
}

// ---------------------------------------------------------------- Conn

std::vector<std::string> libpq_keywords() {
  std::vector<std::string> out;
  PQconninfoOption* opts = PQconndefaults();
  for (PQconninfoOption* o = opts; o && o->keyword; ++o) out.emplace_back(o->keyword);
  PQconninfoFree(opts);
  return out;
}

Conn::Conn(const ConnectSpec& spec, backend::Adapter* counter)
    : counter_(counter), describe_(spec.describe) {
  std::vector<const char*> keys, values;
  for (const auto& [k, v] : spec.params) {
    keys.push_back(k.c_str());
    values.push_back(v.c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  count_round_trip();  // the handshake takes a few; counted as one
  conn_ = PQconnectdbParams(keys.data(), values.data(), 0);
  if (!conn_ || PQstatus(conn_) != CONNECTION_OK) {
    ServerError e = error_of(nullptr, conn_);
    PQfinish(conn_);
    conn_ = nullptr;
    throw_error(e, Context::connect, "connecting to " + describe_);
  }
  PQsetNoticeProcessor(conn_, ignore_notice, nullptr);
}

Conn::~Conn() { PQfinish(conn_); }

void Conn::count_round_trip() {
  if (counter_) counter_->count_round_trip();
}

bool Conn::still_open() {
  if (!ok()) return false;
  if (!batches_.empty()) return true;
  // Reads what arrived without blocking. A server that ended the session sends a FATAL
  // message and closes the socket: the first read takes the message, the second sees the
  // end of the stream and turns the status bad.
  for (int i = 0; i < 2 && ok(); ++i) {
    if (PQconsumeInput(conn_) == 0) {
      broken_ = true;
    } else {
      PQisBusy(conn_);  // parses what was read
    }
  }
  return ok();
}

bool Conn::in_transaction() const {
  const PGTransactionStatusType s = PQtransactionStatus(conn_);
  return s == PQTRANS_INTRANS || s == PQTRANS_INERROR || s == PQTRANS_ACTIVE;
}

void Conn::fail(const PGresult* res, Context ctx) {
  const ServerError e = error_of(res, conn_);
  if (e.connection_lost) broken_ = true;
  throw_error(e, ctx, describe_);
}

std::vector<Result> Conn::simple(std::string_view sql, Context ctx, const CopyProducer* copy) {
  const std::string text(sql);
  if (!PQsendQuery(conn_, text.c_str())) fail(nullptr, ctx);
  count_round_trip();
  std::vector<Result> out;
  std::optional<ServerError> first_error;
  while (PGresult* raw = PQgetResult(conn_)) {
    Result r(raw);
    switch (PQresultStatus(raw)) {
      case PGRES_COPY_IN: {
        try {
          if (!copy) throw StorageError("COPY FROM STDIN without data");
          CopyWriter w(conn_);
          (*copy)(w);
          w.finish();
        } catch (...) {
          PQputCopyEnd(conn_, "aborted by the client");
          while (PGresult* rest = PQgetResult(conn_)) PQclear(rest);
          throw;
        }
        if (PQputCopyEnd(conn_, nullptr) != 1) fail(nullptr, ctx);
        count_round_trip();  // waiting for the COPY to complete and what follows it
        break;
      }
      case PGRES_FATAL_ERROR:
      case PGRES_NONFATAL_ERROR:
      case PGRES_BAD_RESPONSE:
        if (!first_error) first_error = error_of(raw, conn_);
        break;
      default:
        out.push_back(std::move(r));
    }
  }
  if (first_error) {
    first_error->connection_lost = PQstatus(conn_) != CONNECTION_OK;
    if (first_error->connection_lost) broken_ = true;
    throw_error(*first_error, ctx, describe_);
  }
  if (PQstatus(conn_) != CONNECTION_OK) fail(nullptr, ctx);
  return out;
}

void Conn::rollback_quietly() noexcept {
  if (!ok() || !in_transaction()) return;
  try {
    simple("ROLLBACK", Context::other);
  } catch (...) {
    broken_ = true;
  }
}

void Conn::send_statement(const Statement& s, const Params& p) {
  const int ok = s.name[0] ? PQsendQueryPrepared(conn_, s.name, p.size(), p.values(), p.lengths(),
                                                 p.formats(), 1)
                           : PQsendQueryParams(conn_, s.sql, p.size(), nullptr, p.values(),
                                               p.lengths(), p.formats(), 1);
  if (!ok) fail(nullptr, Context::other);
}

Result Conn::run(const Statement& s, const Params& p, Context ctx) {
  if (pipeline_) {
    queue(s, p);
    send_batch();
    return std::move(wait(ctx).front());
  }
  send_statement(s, p);
  count_round_trip();
  Result out;
  std::optional<ServerError> error;
  while (PGresult* raw = PQgetResult(conn_)) {
    const ExecStatusType st = PQresultStatus(raw);
    if (st == PGRES_FATAL_ERROR || st == PGRES_BAD_RESPONSE) {
      if (!error) error = error_of(raw, conn_);
      PQclear(raw);
    } else {
      out = Result(raw);
    }
  }
  if (error) {
    error->connection_lost = PQstatus(conn_) != CONNECTION_OK;
    if (error->connection_lost) broken_ = true;
    throw_error(*error, ctx, describe_);
  }
  return out;
}

void Conn::prepare(const std::vector<Statement>& statements) {
  const bool was_pipeline = pipeline_;
  enter_pipeline();
  for (const auto& s : statements) {
    if (!PQsendPrepare(conn_, s.name, s.sql, 0, nullptr)) fail(nullptr, Context::other);
    ++queued_;
  }
  send_batch();
  wait(Context::other);
  if (!was_pipeline) exit_pipeline();
}

void Conn::exit_pipeline() {
  if (!pipeline_) return;
  if (!PQexitPipelineMode(conn_)) fail(nullptr, Context::other);
  pipeline_ = false;
}

void Conn::exit_pipeline_quietly() noexcept {
  try {
    exit_pipeline();
  } catch (...) {
    broken_ = true;  // still in pipeline mode, or lost: never reused
  }
}

void Conn::enter_pipeline() {
  if (pipeline_) return;
  if (!PQenterPipelineMode(conn_)) fail(nullptr, Context::other);
  pipeline_ = true;
}

void Conn::queue(const Statement& s, const Params& p) {
  send_statement(s, p);
  ++queued_;
}

void Conn::send_batch() {
  if (!PQpipelineSync(conn_)) fail(nullptr, Context::other);
  batches_.push_back(queued_);
  queued_ = 0;
}

std::vector<Result> Conn::wait(Context ctx) {
  if (batches_.empty()) return {};
  count_round_trip();
  std::vector<Result> last;
  std::optional<ServerError> error;
  while (!batches_.empty()) {
    const bool is_last = batches_.size() == 1;
    std::vector<Result> got;
    for (int i = 0; i < batches_.front(); ++i) {
      PGresult* raw = PQgetResult(conn_);
      if (!raw) lost(ctx);
      const ExecStatusType st = PQresultStatus(raw);
      if ((st == PGRES_FATAL_ERROR || st == PGRES_BAD_RESPONSE) && is_last && !error) {
        error = error_of(raw, conn_);
      }
      got.emplace_back(raw);
      if (PQstatus(conn_) != CONNECTION_OK) lost(ctx);
      // Each statement's results end with a null result.
      while (PGresult* extra = PQgetResult(conn_)) PQclear(extra);
    }
    PGresult* sync = PQgetResult(conn_);
    if (!sync) lost(ctx);
    const bool synced = PQresultStatus(sync) == PGRES_PIPELINE_SYNC;
    PQclear(sync);
    if (!synced) lost(ctx);
    batches_.pop_front();
    if (is_last) last = std::move(got);
  }
  if (error) throw_error(*error, ctx, describe_);
  return last;
}

void Conn::lost(Context ctx) {
  broken_ = true;
  batches_.clear();
  queued_ = 0;
  ServerError e = error_of(nullptr, conn_);
  e.connection_lost = true;
  throw_error(e, ctx, describe_);
}

bool Conn::wait_for_notification(double seconds) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    if (PQconsumeInput(conn_) == 0) lost(Context::other);
    bool got = false;
    while (PGnotify* n = PQnotifies(conn_)) {
      got = true;
      PQfreemem(n);
    }
    if (got) return true;
    const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd fd{PQsocket(conn_), POLLIN, 0};
    const int ms = static_cast<int>(std::ceil(left * 1000));
    if (::poll(&fd, 1, ms) < 0 && errno != EINTR) lost(Context::other);
  }
}

}  // namespace relstore::postgresql
