#include "adapters/postgresql/json_mirror.h"

#include "adapters/postgresql/queries.h"
#include "adapters/postgresql/store_connection.h"
#include "relstore/errors.h"

namespace relstore::postgresql::json_mirror {
namespace {

constexpr Statement kFinishMirror = {
    "finish_mirror",
    "SELECT relstore_finish_mirror($1::BIGINT, $2::BOOLEAN, $3::BYTEA, $4::BYTEA, $5::BYTEA, "
    "$6::BIGINT[], $7::TEXT[], $8::BYTEA[], $9::BIGINT[], $10::BYTEA[], $11::BYTEA[], "
    "$12::BYTEA[], $13::TEXT[], $14::BIGINT[], $15::TEXT[], $16::BIGINT[])"};
constexpr Statement kWrite = {
    "",
    "SELECT relstore_json_mirror_write($1::BOOLEAN, $2::BIGINT[], $3::BIGINT[], $4::BYTEA[], "
    "$5::BYTEA[], $6::BYTEA[], $7::TEXT[], $8::BIGINT[], $9::BIGINT[], $10::TEXT[], "
    "$11::BIGINT[])"};
constexpr Statement kMode = {"", kModeSql};  // on the mirror's own connection
// Held shared by follow and rebuild batches, exclusively by zap_all (adapter.cc), before
// the commit lock in both. A zap's DELETE cannot see a batch's rows not yet committed; were
// they to commit after it, rows of the zapped data would stay, and the older TIDs of data
// loaded after would never replace them.
constexpr Statement kWriterLock = {"", "SELECT pg_advisory_xact_lock_shared(1919249523, 5)"};
// A batch moves the progress from where it read it (mirror::Advance), never past the
// newest TID the database holds now: a batch read before a zap would otherwise claim the
// TIDs of data that is gone, and hide data loaded after with older ones.
constexpr Statement kAdvanceHf = {
    "",
    "UPDATE relstore_json_mirror SET last_tid = GREATEST(last_tid, $2) "
    "WHERE id = 0 AND last_tid = $1 AND $2 <= (SELECT COALESCE(MAX(tid), 0) FROM object_state)"};
constexpr Statement kAdvanceHp = {
    "",
    "UPDATE relstore_json_mirror SET last_tid = GREATEST(last_tid, $2) "
    "WHERE id = 0 AND last_tid = $1 "
    "AND $2 <= (SELECT COALESCE(MAX(tid), 0) FROM \"transaction\")"};
constexpr Statement kHasTables = {"", "SELECT to_regclass('relstore_json_mirror') IS NOT NULL"};

struct ModeQueries {
  Statement last_tid;
  Statement changes_since;  // (tid, limit) -> zoid, tid, state; ascending tid
  Statement changes_at;     // (tid) -> zoid, tid, state
  Statement orphans;        // (limit) -> zoid
  const char* pending;      // COUNT of current states newer than last_tid
};

const ModeQueries kHistoryFree = {
    {"", "SELECT COALESCE(MAX(tid), 0) FROM object_state"},
    {"", "SELECT zoid, tid, state FROM object_state WHERE tid > $1 ORDER BY tid, zoid LIMIT $2"},
    {"", "SELECT zoid, tid, state FROM object_state WHERE tid = $1 ORDER BY zoid"},
    {"",
     "SELECT zoid FROM object_json j WHERE NOT EXISTS (SELECT 1 FROM object_state o "
     "WHERE o.zoid = j.zoid AND o.state IS NOT NULL) UNION "
     "SELECT zoid FROM object_json_error e WHERE NOT EXISTS (SELECT 1 FROM object_state o "
     "WHERE o.zoid = e.zoid AND o.state IS NOT NULL) LIMIT $1"},
    "SELECT COUNT(*) FROM object_state WHERE tid > "
    "(SELECT last_tid FROM relstore_json_mirror WHERE id = 0)",
};

const ModeQueries kHistoryPreserving = {
    {"", "SELECT COALESCE(MAX(tid), 0) FROM \"transaction\""},
    {"",
     "SELECT c.zoid, c.tid, s.state FROM current_object c JOIN object_state s "
     "ON s.zoid = c.zoid AND s.tid = c.tid WHERE c.tid > $1 ORDER BY c.tid, c.zoid LIMIT $2"},
    {"",
     "SELECT c.zoid, c.tid, s.state FROM current_object c JOIN object_state s "
     "ON s.zoid = c.zoid AND s.tid = c.tid WHERE c.tid = $1 ORDER BY c.zoid"},
    {"",
     "SELECT zoid FROM object_json j WHERE NOT EXISTS (SELECT 1 FROM current_object c "
     "JOIN object_state s ON s.zoid = c.zoid AND s.tid = c.tid "
     "WHERE c.zoid = j.zoid AND s.state IS NOT NULL) UNION "
     "SELECT zoid FROM object_json_error e WHERE NOT EXISTS (SELECT 1 FROM current_object c "
     "JOIN object_state s ON s.zoid = c.zoid AND s.tid = c.tid "
     "WHERE c.zoid = e.zoid AND s.state IS NOT NULL) LIMIT $1"},
    "SELECT COUNT(*) FROM current_object WHERE tid > "
    "(SELECT last_tid FROM relstore_json_mirror WHERE id = 0)",
};

const ModeQueries& queries_for(bool keep_history) {
  return keep_history ? kHistoryPreserving : kHistoryFree;
}

// Decoder messages travel as TEXT: printable ASCII only, so no encoding can refuse them.
std::string printable(const std::string& message) {
  std::string out = message;
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7e) c = '?';
  }
  return out;
}

// A batch as the array parameters of relstore_json_mirror_write / relstore_finish_mirror.
// JSON text and class names go as BYTEA and are converted on the server, inside the
// subtransaction that turns a refusal into an error entry.
struct BatchArrays {
  explicit BatchArrays(const mirror::Batch& b) {
    for (const auto& r : b.rows) {
      zoids.int64(r.oid.sql());
      tids.int64(r.tid.sql());
      class_names.bytes(r.class_name);
      ghosts.bytes(r.ghost_pickle);
      states.bytes(r.json);
      refs.bytes(mirror::refs_pg_array(r.refs));
    }
    for (const auto& e : b.errors) {
      error_zoids.int64(e.oid.sql());
      error_tids.int64(e.tid.sql());
      errors.bytes(printable(e.message));
    }
    for (const auto& [oid, unused] : b.deletes) deleted.int64(oid.sql());
  }

  BinaryArray zoids{BinaryArray::kInt8}, tids{BinaryArray::kInt8};
  BinaryArray class_names{BinaryArray::kBytea}, ghosts{BinaryArray::kBytea};
  BinaryArray states{BinaryArray::kBytea}, refs{BinaryArray::kText};
  BinaryArray error_zoids{BinaryArray::kInt8}, error_tids{BinaryArray::kInt8};
  BinaryArray errors{BinaryArray::kText}, deleted{BinaryArray::kInt8};
};

}  // namespace

const std::vector<Statement> kStoreStatements = {kVoteMode, kFinishMirror};

Tid finish_in_commit(Conn& conn, const backend::FinishRequest& req, FinishParams& f) {
  BatchArrays a(*req.mirror);
  Params& p = f.params();
  p.bytes(a.zoids.data()).bytes(a.class_names.data()).bytes(a.ghosts.data());
  p.bytes(a.states.data()).bytes(a.refs.data()).bytes(a.error_zoids.data());
  p.bytes(a.errors.data()).bytes(a.deleted.data());
  return finish_and_commit(conn, kFinishMirror, f);
}

Conn& Mirror::conn() {
  if (conn_ && conn_->ok()) return *conn_;
  conn_.reset();
  auto c = open_conn(loc_, Role::admin, &counter_);
  if (!c->run(kHasTables, Params(), Context::other).int64(0, 0)) {
    throw SchemaError(loc_.connect.describe +
                      " has no JSON mirror tables: run `relstore migrate up` on it");
  }
  conn_ = std::move(c);
  return *conn_;
}

template <class F>
void Mirror::write_txn(F&& body) {
  Conn& c = conn();
  c.simple("BEGIN", Context::other);
  try {
    body(c);
    c.simple("COMMIT", Context::other);
  } catch (...) {
    c.rollback_quietly();
    throw;
  }
}

backend::MirrorState Mirror::state() {
  std::lock_guard lock(mu_);
  const ModeQueries& q = queries_for(loc_.keep_history);
  Conn& c = conn();
  std::vector<Result> r;
  try {
    // One snapshot, one round trip.
    r = c.simple(std::string("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; "
                             "SELECT mode, last_tid FROM relstore_json_mirror WHERE id = 0; ") +
                     q.last_tid.sql + "; SELECT COUNT(*) FROM object_json; " +
                     "SELECT COUNT(*) FROM object_json_error; " + q.pending + "; COMMIT",
                 Context::read);
  } catch (...) {
    c.rollback_quietly();
    throw;
  }
  backend::MirrorState st;
  st.mode = r[1].rows() ? parse_mirror_mode(r[1].bytes(0, 0)) : MirrorMode::off;
  st.last_tid = Tid::from_sql(r[1].int64(0, 1));
  st.database_tid = Tid::from_sql(r[2].int64(0, 0));
  st.rows = static_cast<uint64_t>(r[3].int64(0, 0));
  st.errors = static_cast<uint64_t>(r[4].int64(0, 0));
  st.pending = static_cast<uint64_t>(r[5].int64(0, 0));
  return st;
}

void Mirror::set_mode(MirrorMode mode) {
  std::lock_guard lock(mu_);
  // The mirror lock first (votes hold it shared from their mode read to their commit),
  // then the commit lock, in the order votes take them.
  write_txn([&](Conn& c) {
    c.simple(std::string("SELECT pg_advisory_xact_lock(1919249523, 3); ") + kCommitLockSql +
                 "; UPDATE relstore_json_mirror SET mode = '" + mirror_mode_name(mode) +
                 "' WHERE id = 0",
             Context::other);
  });
}

backend::MirrorChanges Mirror::changes(Tid since, size_t limit) {
  std::lock_guard lock(mu_);
  const ModeQueries& q = queries_for(loc_.keep_history);
  Conn& c = conn();
  backend::MirrorChanges out;
  auto read_rows = [&](const Result& r) {
    for (int i = 0; i < r.rows(); ++i) {
      out.states.emplace_back(
          Oid::from_sql(r.int64(i, 0)),
          backend::StateRow{Tid::from_sql(r.int64(i, 1)), r.optional_bytes(i, 2)});
    }
  };
  c.simple("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", Context::read);
  try {
    out.database_tid = Tid::from_sql(c.run(q.last_tid, Params(), Context::read).int64(0, 0));
    read_rows(c.run(q.changes_since, Params().int64(since.sql()).int64(static_cast<int64_t>(limit)),
                    Context::read));
    if (out.states.size() >= limit && !out.states.empty()) {
      // Whole transactions only: drop the last TID's rows, or take all of them when that
      // TID is the only one in the batch.
      out.more = true;
      const Tid last = out.states.back().second.tid;
      while (!out.states.empty() && out.states.back().second.tid == last) out.states.pop_back();
      if (out.states.empty())
        read_rows(c.run(q.changes_at, Params().int64(last.sql()), Context::read));
    }
    c.simple("COMMIT", Context::read);
  } catch (...) {
    c.rollback_quietly();
    throw;
  }
  return out;
}

std::vector<Oid> Mirror::orphans(size_t limit) {
  std::lock_guard lock(mu_);
  const Result r = conn().run(queries_for(loc_.keep_history).orphans,
                              Params().int64(static_cast<int64_t>(limit)), Context::read);
  std::vector<Oid> out;
  for (int i = 0; i < r.rows(); ++i) out.push_back(Oid::from_sql(r.int64(i, 0)));
  return out;
}

void Mirror::apply(const mirror::Batch& batch, std::optional<mirror::Advance> advance) {
  std::lock_guard lock(mu_);
  write_txn([&](Conn& c) {
    // Under the mirror lock the mode stays as read. In in-commit mode commits write rows
    // too: the commit lock keeps them out while the guarded rows go in, so no commit can
    // slip between a guard's check and its write (nor deadlock on the same rows).
    c.run(kWriterLock, Params(), Context::other);
    const Result mode = c.run(kMode, Params(), Context::other);
    if (mode.bytes(0, 0) == "in-commit") c.run(kCommitLock, Params(), Context::other);
    if (!batch.empty()) {
      BatchArrays a(batch);
      Params p;
      p.boolean(true).bytes(a.zoids.data()).bytes(a.tids.data()).bytes(a.class_names.data());
      p.bytes(a.ghosts.data()).bytes(a.states.data()).bytes(a.refs.data());
      p.bytes(a.error_zoids.data()).bytes(a.error_tids.data()).bytes(a.errors.data());
      p.bytes(a.deleted.data());
      c.run(kWrite, p, Context::other);
    }
    if (advance) {
      c.run(loc_.keep_history ? kAdvanceHp : kAdvanceHf,
            Params().int64(advance->from.sql()).int64(advance->to.sql()), Context::other);
    }
  });
}

void Mirror::clear() {
  std::lock_guard lock(mu_);
  write_txn([&](Conn& c) {
    c.simple(std::string("SELECT pg_advisory_xact_lock_shared(1919249523, 3); ") + kCommitLockSql +
                 "; DELETE FROM object_json; "
                 "DELETE FROM object_json_error; "
                 "UPDATE relstore_json_mirror SET last_tid = 0 WHERE id = 0",
             Context::other);
  });
}

void Mirror::settle() {
  std::lock_guard lock(mu_);
  write_txn([&](Conn& c) {
    c.simple(std::string(kCommitLockSql) + "; " + mirror::settle_sql(loc_.keep_history),
             Context::other);
  });
}

void Mirror::wait(double seconds) {
  // Only the follower loop waits; `listener_` is not shared with the other calls.
  if (!listener_ || !listener_->ok()) {
    listener_.reset();
    auto c = open_conn(loc_, Role::listen, &counter_);
    c->simple("LISTEN relstore_json_mirror", Context::other);
    listener_ = std::move(c);
    // Commits made before LISTEN woke nobody: the caller looks once more before waiting.
    return;
  }
  try {
    listener_->wait_for_notification(seconds);
  } catch (const DisconnectedError&) {
    listener_.reset();  // reconnects and listens again at the next call
  }
}

}  // namespace relstore::postgresql::json_mirror
