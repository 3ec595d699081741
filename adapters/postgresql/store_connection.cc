#include "adapters/postgresql/store_connection.h"

#include <algorithm>
#include <cmath>

#include "adapters/postgresql/json_mirror.h"
#include "adapters/postgresql/queries.h"
#include "backend/blob_chunks.h"
#include "backend/forced_tid.h"
#include "relstore/errors.h"

namespace relstore::postgresql {
namespace {

// A vote of up to 64 kB of records (with kRowOverhead each) keeps them on the client: the
// vote sends their OIDs and serials to relstore_lock_and_detect and the finish sends the
// records themselves to relstore_finish, as binary array parameters in a pipeline (one
// round trip each). Staging them in temp_store as well (DELETE, INSERT, and a TRUNCATE
// now and then to drop the dead rows) cost ~100 µs a commit of 20 small objects, more
// than the rest of the vote (server log, log_min_duration_statement = 0).
constexpr size_t kPipelinedUploadBytes = 64 << 10;
constexpr size_t kRowOverhead = 64;  // tuple header, zoid, prev_tid, md5, index entry
// A larger vote is copied into temp_store with binary COPY, whose CopyInResponse the
// client must wait for before it may send the data: a second round trip, which a bigger
// upload amortises (docs/postgresql.md). temp_store is RelStorage's per-session table
// (design.md §3), but without ON COMMIT DELETE ROWS: that truncates the table's files at
// every commit of a session that touched any temporary table, about 10 ms per commit on
// our ext4 disk under load. Such a vote truncates it first instead (about 1 ms, new
// files), which a vote of more than 64 kB amortises: deleted rows would keep their pages
// (temporary tables are never vacuumed) and slow every later scan of the table.
constexpr const char* kCreateTempStore =
    "CREATE TEMPORARY TABLE IF NOT EXISTS temp_store (zoid BIGINT NOT NULL PRIMARY KEY, "
    "prev_tid BIGINT NOT NULL, md5 CHAR(32), state BYTEA)";
constexpr Statement kLockAndDetect = {
    "vote_lock_and_detect",
    "SELECT o_kind, o_zoid, o_committed, o_given, o_state FROM relstore_lock_and_detect("
    "$1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5, $6)"};
constexpr Statement kFinish = {"finish",
                               "SELECT relstore_finish($1::BIGINT, $2::BOOLEAN, $3::BYTEA, "
                               "$4::BYTEA, $5::BYTEA, $6::BIGINT[], $7::TEXT[], $8::BYTEA[])"};
constexpr Statement kFinishCommit = {"finish_commit", "COMMIT"};
// A vote's blob goes into a large object (blob_chunk's chunk column, one per blob, as
// RelStorage stores them) in pieces of at most this, so that none nears bytea's 1 GB.
constexpr size_t kBlobPiece = 16 << 20;
constexpr Statement kBlobCreate = {"", "SELECT lo_from_bytea(0, $1::bytea)::bigint"};
constexpr Statement kBlobAppend = {"", "SELECT lo_put($1::bigint::oid, $2::bigint, $3::bytea)"};
// The objects' rows, just written by the finish call, carry the commit's TID.
constexpr Statement kBlobRowsHp = {
    "",
    "INSERT INTO blob_chunk (zoid, tid, chunk_num, chunk) SELECT u.zoid, c.tid, 0, u.lo::oid "
    "FROM unnest($1::bigint[], $2::bigint[]) AS u(zoid, lo) "
    "JOIN current_object c ON c.zoid = u.zoid"};
constexpr Statement kBlobRowsHf = {
    "",
    "INSERT INTO blob_chunk (zoid, chunk_num, tid, chunk) SELECT u.zoid, 0, o.tid, u.lo::oid "
    "FROM unnest($1::bigint[], $2::bigint[]) AS u(zoid, lo) "
    "JOIN object_state o ON o.zoid = u.zoid"};
constexpr const char* kCopyTempStore =
    "COPY temp_store (zoid, prev_tid, md5, state) FROM STDIN (FORMAT binary)";
constexpr Statement kReplaceTemp = {
    "", "UPDATE temp_store SET prev_tid = $1, md5 = $2, state = $3 WHERE zoid = $4"};

// A record's md5 (NULL when none: history-free) and state (NULL: deleted), into a COPY
// row, array elements or statement parameters alike (each has bytes() and null()).
template <class Md5Out, class StateOut>
void put_md5_and_state(const backend::PendingRecord& r, Md5Out& md5, StateOut& state) {
  if (!r.md5) {
    md5.null();
  } else {
    md5.bytes(*r.md5);
  }
  if (r.state) {
    state.bytes(*r.state);
  } else {
    state.null();
  }
}

std::string bigint_array(const std::vector<int64_t>& values) {
  std::string out = "'{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(values[i]);
  }
  return out + "}'::bigint[]";
}

}  // namespace

PgStoreConnection::PgStoreConnection(const Location& loc, backend::Adapter& adapter)
    : loc_(loc), adapter_(adapter) {
  ensure_open();
}

PgStoreConnection::~PgStoreConnection() { rollback(); }

void PgStoreConnection::ensure_open() {
  if (conn_ && conn_->still_open()) return;
  conn_.reset();
  auto conn = open_conn(loc_, Role::store, &adapter_);
  conn->simple(kCreateTempStore, Context::other);
  // Prepared once: parsing and planning them for every transaction cost about 60 µs a
  // commit (server log with log_min_duration_statement = 0).
  std::vector<Statement> prepared = {kLockAndDetect, kFinish, kFinishCommit};
  if (loc_.json_mirror) {
    prepared.insert(prepared.end(), json_mirror::kStoreStatements.begin(),
                    json_mirror::kStoreStatements.end());
  }
  conn->prepare(prepared);
  conn_ = std::move(conn);
}

std::vector<Oid> PgStoreConnection::allocate_oids() {
  ensure_open();
  // A process that creates many objects asks for more at a time, one round trip each;
  // OIDs it never uses are simply skipped.
  std::vector<Oid> out = OidAllocator(*conn_).allocate(oid_blocks_);
  oid_blocks_ = std::min(oid_blocks_ * 2, 16);
  return out;
}

void PgStoreConnection::set_min_oid(Oid oid) {
  ensure_open();
  OidAllocator(*conn_).set_min(oid);
}

std::vector<backend::ConflictRow> PgStoreConnection::vote(const backend::VoteRequest& req) {
  ensure_open();
  blob_los_.clear();
  std::vector<backend::ConflictRow> conflicts;
  try {
    conflicts = try_vote(req);
  } catch (const DisconnectedError&) {
    if (conn_->ok()) throw;
    // Whatever the lost session did died with it (the transaction, its locks, its temp
    // rows), so the vote can start over on a new connection once.
    ensure_open();
    conflicts = try_vote(req);
  }
  upload_blobs(req.blobs);
  return conflicts;
}

void PgStoreConnection::upload_blobs(std::span<const backend::PendingBlob> blobs) {
  for (const auto& b : blobs) {
    int64_t lo = 0;
    int64_t offset = 0;
    backend::read_blob_chunks(b.path, kBlobPiece, [&](int64_t num, Bytes&& piece) {
      if (num == 0) {
        lo = conn_->run(kBlobCreate, Params().bytes(piece), Context::vote).int64(0, 0);
      } else {
        conn_->run(kBlobAppend, Params().int64(lo).int64(offset).bytes(piece), Context::vote);
      }
      offset += static_cast<int64_t>(piece.size());
    });
    blob_los_.emplace_back(b.oid, lo);
  }
}

std::vector<backend::ConflictRow> PgStoreConnection::try_vote(const backend::VoteRequest& req) {
  if (std::abs(req.lock_timeout - loc_.lock_timeout) > 1e-9) {
    // Connections are opened with the storage's timeout; only a caller asking for another
    // one costs a round trip.
    const long ms = std::max(1L, std::lround(req.lock_timeout * 1000));
    conn_->simple("SET lock_timeout = " + std::to_string(ms), Context::other);
  }
  size_t bytes = 0;
  for (const auto& r : req.records) bytes += kRowOverhead + (r.state ? r.state->size() : 0);
  staged_ = bytes > kPipelinedUploadBytes;
  const bool call = req.check_conflicts || !req.read_current.empty() || req.forced_tid;
  // results[0] is BEGIN's, results[1] the JSON mirror's mode when the database has one,
  // the last the lock-and-detect call's when there is one.
  const std::vector<Result> results =
      staged_ ? vote_with_copy(req, call) : vote_pipelined(req, call);
  mirror_in_commit_ = loc_.json_mirror && results.at(1).bytes(0, 0) == "in-commit";
  if (!call) return {};
  const Result& r = results.back();
  std::vector<backend::ConflictRow> out;
  for (int i = 0; i < r.rows(); ++i) {
    const std::string kind = r.bytes(i, 0);
    const Oid oid = Oid::from_sql(r.int64(i, 1));
    const Tid committed = Tid::from_sql(r.int64(i, 2));
    const Tid given = Tid::from_sql(r.int64(i, 3));
    if (kind == "tid_not_after")
      throw backend::tid_not_after(given, committed, loc_.connect.describe);
    if (kind == "read_stale") throw ReadConflictError(oid, std::make_pair(committed, given));
    if (kind == "read_locked") {
      throw ReadConflictError(oid, std::nullopt,
                              "another transaction is committing a change to it");
    }
    out.push_back({oid, committed, given, r.optional_bytes(i, 4)});
  }
  return out;
}

std::vector<Result> PgStoreConnection::vote_pipelined(const backend::VoteRequest& req, bool call) {
  BinaryArray zoids{BinaryArray::kInt8}, prev_tids{BinaryArray::kInt8};
  for (const auto& r : req.records) {
    zoids.int64(r.oid.sql());
    prev_tids.int64(r.prev_tid.sql());
  }
  BinaryArray read_oids{BinaryArray::kInt8}, read_tids{BinaryArray::kInt8};
  for (const auto& rc : req.read_current) {
    read_oids.int64(rc.oid.sql());
    read_tids.int64(rc.serial.sql());
  }
  conn_->enter_pipeline();
  try {
    conn_->queue(kBegin);
    if (loc_.json_mirror) conn_->queue(json_mirror::kVoteMode);
    if (call) {
      Params p;
      p.bytes(zoids.data()).bytes(prev_tids.data());
      p.bytes(read_oids.data()).bytes(read_tids.data()).boolean(req.check_conflicts);
      if (req.forced_tid) {
        p.int64(req.forced_tid->sql());
      } else {
        p.null();
      }
      conn_->queue(kLockAndDetect, p);
    }
    conn_->send_batch();
    std::vector<Result> results = conn_->wait(Context::vote);
    conn_->exit_pipeline();
    return results;
  } catch (...) {
    conn_->exit_pipeline_quietly();
    throw;
  }
}

std::vector<Result> PgStoreConnection::vote_with_copy(const backend::VoteRequest& req, bool call) {
  // One message: the server runs BEGIN, waits for the COPY data, then runs the call. The
  // JSON mirror's mode comes first (relstore_json_mirror_mode.sql), in the same message.
  std::string sql = "BEGIN; ";
  if (loc_.json_mirror) sql += std::string(json_mirror::kVoteMode.sql) + "; ";
  if (temp_store_used_) sql += "TRUNCATE temp_store; ";
  temp_store_used_ = true;
  sql += kCopyTempStore;
  if (call) {
    std::vector<int64_t> oids, tids;
    for (const auto& rc : req.read_current) {
      oids.push_back(rc.oid.sql());
      tids.push_back(rc.serial.sql());
    }
    // NULL records: relstore_lock_and_detect reads them from temp_store.
    sql +=
        "; SELECT o_kind, o_zoid, o_committed, o_given, o_state FROM "
        "relstore_lock_and_detect(NULL::bigint[], NULL::bigint[], " +
        bigint_array(oids) + ", " + bigint_array(tids) + ", " +
        (req.check_conflicts ? "true" : "false") + ", " +
        (req.forced_tid ? std::to_string(req.forced_tid->sql()) : "NULL") + ")";
  }
  const CopyProducer rows = [&](CopyWriter& w) {
    for (const auto& r : req.records) {
      w.begin_row(4);
      w.int64(r.oid.sql());
      w.int64(r.prev_tid.sql());
      put_md5_and_state(r, w, w);
    }
  };
  return conn_->simple(sql, Context::vote, &rows);
}

void PgStoreConnection::replace(std::span<const backend::PendingRecord> records) {
  if (!staged_) return;  // the finish sends the records as they are then
  // All the updates in one pipeline: one round trip however many were resolved.
  conn_->enter_pipeline();
  for (const auto& r : records) {
    Params p;
    p.int64(r.prev_tid.sql());
    put_md5_and_state(r, p, p);
    p.int64(r.oid.sql());
    conn_->queue(kReplaceTemp, p);
  }
  conn_->send_batch();
  try {
    conn_->wait(Context::vote);
  } catch (...) {
    conn_->exit_pipeline_quietly();
    throw;
  }
  conn_->exit_pipeline();
}

Tid PgStoreConnection::finish(const backend::FinishRequest& req) {
  // A session the server ended after the vote (idle_in_transaction_session_timeout, an
  // administrator, a restart) took the vote with it, and nothing of the commit has been
  // sent: the commit surely did not happen, so the error is retryable, not the "may or
  // may not have been applied" of a connection lost while committing.
  if (!conn_->still_open()) {
    throw DisconnectedError(conn_->describe() +
                            ": the server closed the connection after the vote; the commit "
                            "was not sent and nothing was committed (the transaction can be "
                            "run again)");
  }
  FinishParams f(req, staged_);
  if (!blob_los_.empty()) f.set_blobs(blob_los_, loc_.keep_history);
  blob_los_.clear();
  if (req.mirror) return json_mirror::finish_in_commit(*conn_, req, f);
  return finish_and_commit(*conn_, kFinish, f);
}

void PgStoreConnection::rollback() noexcept {
  blob_los_.clear();  // the large objects go with the transaction
  if (conn_) conn_->rollback_quietly();
}

FinishParams::FinishParams(const backend::FinishRequest& req, bool staged) {
  if (req.forced_tid) {
    p_.int64(req.forced_tid->sql());
  } else {
    p_.null();
  }
  const TransactionMetaData& meta = *req.meta;
  p_.boolean(req.status == 'p').bytes(meta.user).bytes(meta.description).bytes(meta.extension);
  if (staged) {
    p_.null().null().null();  // relstore_records reads temp_store
    return;
  }
  for (const auto& r : req.records) {
    zoids_.int64(r.oid.sql());
    put_md5_and_state(r, md5s_, states_);
  }
  p_.bytes(zoids_.data()).bytes(md5s_.data()).bytes(states_.data());
}

void FinishParams::set_blobs(const std::vector<std::pair<Oid, int64_t>>& large_objects,
                             bool keep_history) {
  for (const auto& [oid, lo] : large_objects) {
    blob_zoids_.int64(oid.sql());
    blob_los_.int64(lo);
  }
  blob_p_.bytes(blob_zoids_.data()).bytes(blob_los_.data());
  blob_statement_ = keep_history ? &kBlobRowsHp : &kBlobRowsHf;
}

Tid finish_and_commit(Conn& conn, const Statement& finish, FinishParams& f) {
  conn.enter_pipeline();
  std::vector<Result> results;
  try {
    conn.queue(finish, f.params());
    if (f.blob_statement()) conn.queue(*f.blob_statement(), f.blob_params());
    conn.queue(kFinishCommit);
    conn.send_batch();
    results = conn.wait(Context::commit);
  } catch (...) {
    conn.exit_pipeline_quietly();
    throw;
  }
  conn.exit_pipeline();
  return Tid::from_sql(results.front().int64(0, 0));
}

}  // namespace relstore::postgresql
