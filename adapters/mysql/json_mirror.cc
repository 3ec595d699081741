#include "adapters/mysql/json_mirror.h"

#include <cstdio>

#include "relstore/errors.h"

namespace relstore::mysql::json_mirror {
namespace {

struct ModeQueries {
  const char* last_tid;
  const char* changes;     // + since + " ORDER BY … LIMIT " + limit: zoid, tid, state
  const char* changes_at;  // + tid + " ORDER BY zoid": zoid, tid, state
  const char* orphans;     // + limit: zoid
  const char* pending;     // COUNT of current states newer than last_tid
};

const ModeQueries kHistoryFree = {
    "SELECT COALESCE(MAX(tid), 0) FROM object_state",
    "SELECT zoid, tid, state FROM object_state WHERE tid > ",
    "SELECT zoid, tid, state FROM object_state WHERE tid = ",
    "SELECT zoid FROM object_json j WHERE NOT EXISTS (SELECT 1 FROM object_state o "
    "WHERE o.zoid = j.zoid AND o.state IS NOT NULL) UNION "
    "SELECT zoid FROM object_json_error e WHERE NOT EXISTS (SELECT 1 FROM object_state o "
    "WHERE o.zoid = e.zoid AND o.state IS NOT NULL) LIMIT ",
    "SELECT COUNT(*) FROM object_state WHERE tid > "
    "(SELECT last_tid FROM relstore_json_mirror WHERE id = 0)",
};

const ModeQueries kHistoryPreserving = {
    "SELECT COALESCE(MAX(tid), 0) FROM \"transaction\"",
    "SELECT c.zoid, c.tid, s.state FROM current_object c JOIN object_state s "
    "ON s.zoid = c.zoid AND s.tid = c.tid WHERE c.tid > ",
    "SELECT c.zoid, c.tid, s.state FROM current_object c JOIN object_state s "
    "ON s.zoid = c.zoid AND s.tid = c.tid WHERE c.tid = ",
    "SELECT zoid FROM object_json j WHERE NOT EXISTS (SELECT 1 FROM current_object c "
    "JOIN object_state s ON s.zoid = c.zoid AND s.tid = c.tid "
    "WHERE c.zoid = j.zoid AND s.state IS NOT NULL) UNION "
    "SELECT zoid FROM object_json_error e WHERE NOT EXISTS (SELECT 1 FROM current_object c "
    "JOIN object_state s ON s.zoid = c.zoid AND s.tid = c.tid "
    "WHERE c.zoid = e.zoid AND s.state IS NOT NULL) LIMIT ",
    "SELECT COUNT(*) FROM current_object WHERE tid > "
    "(SELECT last_tid FROM relstore_json_mirror WHERE id = 0)",
};

const ModeQueries& queries_for(bool keep_history) {
  return keep_history ? kHistoryPreserving : kHistoryFree;
}

// Decoder messages as printable ASCII of bounded length: no column or encoding can refuse
// them.
std::string printable(const std::string& message) {
  std::string out = message.substr(0, 1000);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7e) c = '?';
  }
  return out;
}

std::string number(int64_t v) { return std::to_string(v); }

}  // namespace

UploadRows temp_rows(const mirror::Batch& batch) {
  const mirror::Batch* b = &batch;
  const size_t rows = b->rows.size(), errors = b->errors.size();
  UploadRows out;
  out.count = rows + errors + b->deletes.size();
  out.size = [b, rows, errors](size_t i) -> size_t {
    if (i < rows) {
      const mirror::Row& r = b->rows[i];
      return 80 + 21 * r.refs.size() + binary_literal_size(r.class_name) +
             binary_literal_size(r.ghost_pickle) + lean_literal_size(r.json);
    }
    if (i < rows + errors) return 80 + binary_literal_size(b->errors[i - rows].message);
    return 60;
  };
  out.append = [b, rows, errors](std::string& sql, size_t i) {
    // (zoid, tid, class_name, ghost_pickle, state, refs, message)
    if (i < rows) {
      const mirror::Row& r = b->rows[i];
      sql += '(' + number(r.oid.sql()) + ',' + number(r.tid.sql()) + ',';
      append_binary_literal(sql, r.class_name);
      sql += ',';
      append_binary_literal(sql, r.ghost_pickle);
      sql += ',';
      append_lean_literal(sql, r.json);
      sql += ",'" + mirror::refs_json(r.refs) + "',NULL)";
    } else if (i < rows + errors) {
      const mirror::Error& e = b->errors[i - rows];
      sql += '(' + number(e.oid.sql()) + ',' + number(e.tid.sql()) + ",NULL,NULL,NULL,NULL,";
      append_binary_literal(sql, printable(e.message));
      sql += ')';
    } else {
      const auto& [oid, tid] = b->deletes[i - rows - errors];
      sql += '(' + number(oid.sql()) + ',' + number(tid.sql()) + ",NULL,NULL,NULL,NULL,NULL)";
    }
  };
  out.name = [b, rows, errors](size_t i) {
    const Oid oid = i < rows            ? b->rows[i].oid
                    : i < rows + errors ? b->errors[i - rows].oid
                                        : b->deletes[i - rows - errors].first;
    return "the JSON mirror row of oid " + oid.hex();
  };
  return out;
}

bool has_tables(Connection& conn) {
  return conn.query_int(
             "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() "
             "AND TABLE_NAME IN ('relstore_json_mirror', 'relstore_json_mirror_lock')") == 2;
}

namespace {

// The migration's record, not only its tables: MySQL commits DDL statement by statement,
// so a migration cut short leaves tables without their rows (an `enable` then changed no
// row and said it had), until `migrate up` runs it again.
bool is_installed(Connection& conn) {
  return has_tables(conn) &&
         conn.query_int("SELECT COUNT(*) FROM relstore_schema WHERE name = 'json_mirror'") == 1;
}

}  // namespace

std::unique_ptr<Connection> Mirror::open(Role role) {
  auto c = open_connection(settings_, role, &counter_);
  if (!is_installed(*c)) {
    throw SchemaError(settings_.connect.describe +
                      " has no JSON mirror tables, or their migration did not finish: run "
                      "`relstore migrate up` on it");
  }
  return c;
}

Connection& Mirror::writer() {
  if (settings_.read_only) throw ReadOnlyError();
  if (!writer_ || !writer_->healthy()) writer_ = open(Role::store);
  return *writer_;
}

Connection& Mirror::reader() {
  if (!reader_ || !reader_->healthy()) reader_ = open(Role::inspect);
  return *reader_;
}

void Mirror::write(const std::string& sql, int statements) {
  Connection& c = writer();
  try {
    c.batch(sql, statements, Context::other, "writing the JSON mirror");
  } catch (...) {
    c.rollback();
    throw;
  }
}

backend::MirrorState Mirror::state() {
  std::lock_guard lock(mu_);
  const ModeQueries& q = queries_for(settings_.keep_history);
  // One snapshot, one round trip.
  const std::string sql =
      std::string(
          "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY; "
          "SELECT mode, last_tid FROM relstore_json_mirror WHERE id = 0; ") +
      q.last_tid + "; SELECT COUNT(*) FROM object_json; SELECT COUNT(*) FROM object_json_error; " +
      q.pending + "; COMMIT";
  backend::MirrorState st;
  int result = 0;
  reader().batch(
      sql, 7,
      [&](Rows& r) {
        const int i = result++;
        if (!r.next()) return;
        switch (i) {
          case 0:
            st.mode = parse_mirror_mode(r.bytes(0));
            st.last_tid = Tid::from_sql(r.int64(1));
            break;
          case 1:
            st.database_tid = Tid::from_sql(r.int64(0));
            break;
          case 2:
            st.rows = static_cast<uint64_t>(r.int64(0));
            break;
          case 3:
            st.errors = static_cast<uint64_t>(r.int64(0));
            break;
          case 4:
            st.pending = static_cast<uint64_t>(r.int64(0));
            break;
          default:
            break;
        }
      },
      Context::read);
  return st;
}

void Mirror::set_mode(MirrorMode mode) {
  std::lock_guard lock(mu_);
  // The mode's lock first (votes hold it shared from their mode read to their commit),
  // then the commit lock, in the order votes take them.
  write(std::string("SELECT id FROM relstore_json_mirror_lock WHERE id = 0 FOR UPDATE; "
                    "SELECT tid FROM commit_row_lock WHERE tid = 0 FOR UPDATE; "
                    "UPDATE relstore_json_mirror SET mode = '") +
            mirror_mode_name(mode) + "' WHERE id = 0; COMMIT",
        4);
}

backend::MirrorChanges Mirror::changes(Tid since, size_t limit) {
  std::lock_guard lock(mu_);
  const ModeQueries& q = queries_for(settings_.keep_history);
  const std::string order =
      settings_.keep_history ? " ORDER BY c.tid, c.zoid" : " ORDER BY tid, zoid";
  backend::MirrorChanges out;
  auto read_rows = [&](Rows& r) {
    while (r.next()) {
      out.states.emplace_back(Oid::from_sql(r.int64(0)),
                              backend::StateRow{Tid::from_sql(r.int64(1)), r.optional_bytes(2)});
    }
  };
  Connection& c = reader();
  int result = 0;
  c.batch(
      std::string("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY; ") + q.last_tid + "; " +
          q.changes + number(since.sql()) + order + " LIMIT " + number(static_cast<int64_t>(limit)),
      3,
      [&](Rows& r) {
        if (result++ == 0) {
          if (r.next()) out.database_tid = Tid::from_sql(r.int64(0));
        } else {
          read_rows(r);
        }
      },
      Context::read);
  try {
    if (out.states.size() >= limit && !out.states.empty()) {
      // Whole transactions only: drop the last TID's rows, or take all of them when that
      // TID is the only one in the batch.
      out.more = true;
      const Tid last = out.states.back().second.tid;
      while (!out.states.empty() && out.states.back().second.tid == last) out.states.pop_back();
      if (out.states.empty()) {
        c.batch(std::string(q.changes_at) + number(last.sql()) +
                    (settings_.keep_history ? " ORDER BY c.zoid" : " ORDER BY zoid"),
                1, read_rows, Context::read);
      }
    }
    c.exec("COMMIT", Context::read);
  } catch (...) {
    c.rollback();
    throw;
  }
  return out;
}

const mirror::Batch& fit_to_packet(const mirror::Batch& batch, const Settings& settings,
                                   std::optional<mirror::Batch>& fitted) {
  const UploadRows rows = temp_rows(batch);
  const size_t room = packet_budget(settings) - kInsertTemp.size();
  for (size_t i = 0; i < batch.rows.size(); ++i) {
    const bool fits = rows.size(i) <= room;
    if (fits && !fitted) continue;
    if (!fitted) {
      fitted.emplace();
      fitted->rows.assign(batch.rows.begin(), batch.rows.begin() + static_cast<ptrdiff_t>(i));
      fitted->errors = batch.errors;
      fitted->deletes = batch.deletes;
    }
    const mirror::Row& r = batch.rows[i];
    if (fits) {
      fitted->rows.push_back(r);
      continue;
    }
    std::string message = "its JSON row needs " + std::to_string(rows.size(i)) +
                          " bytes on the wire, more than the server's max_allowed_packet (" +
                          std::to_string(settings.server.max_allowed_packet) + ") allows";
    std::fprintf(stderr, "relstore json-mirror: oid %s is not mirrored: %s\n", r.oid.hex().c_str(),
                 message.c_str());
    fitted->errors.push_back({r.oid, r.tid, std::move(message)});
  }
  if (!fitted) return batch;
  return *fitted;
}

std::vector<Oid> Mirror::orphans(size_t limit) {
  std::lock_guard lock(mu_);
  std::vector<Oid> out;
  reader().batch(
      std::string(queries_for(settings_.keep_history).orphans) +
          number(static_cast<int64_t>(limit)),
      1,
      [&](Rows& r) {
        while (r.next()) out.push_back(Oid::from_sql(r.int64(0)));
      },
      Context::read);
  return out;
}

void Mirror::apply(const mirror::Batch& batch, std::optional<mirror::Advance> advance) {
  std::lock_guard lock(mu_);
  Connection& c = writer();
  const std::string call = "CALL relstore_json_mirror_apply_batch(" +
                           (advance ? number(advance->from.sql()) + ", " + number(advance->to.sql())
                                    : std::string("NULL, NULL")) +
                           ")";
  try {
    std::optional<mirror::Batch> fitted;
    upload(c, settings_, kInsertTemp, temp_rows(fit_to_packet(batch, settings_, fitted)), call, 1,
           nullptr, Context::other);
  } catch (...) {
    c.rollback();
    throw;
  }
}

void Mirror::clear() {
  std::lock_guard lock(mu_);
  // Under the mode's lock and the commit lock: no commit writes rows meanwhile.
  write(
      "SELECT id FROM relstore_json_mirror_lock WHERE id = 0 LOCK IN SHARE MODE; "
      "SELECT tid FROM commit_row_lock WHERE tid = 0 FOR UPDATE; DELETE FROM object_json; "
      "DELETE FROM object_json_error; UPDATE relstore_json_mirror SET last_tid = 0 WHERE id = 0; "
      "COMMIT",
      6);
}

void Mirror::settle() {
  std::lock_guard lock(mu_);
  write(std::string("SELECT tid FROM commit_row_lock WHERE tid = 0 FOR UPDATE; ") +
            mirror::settle_sql(settings_.keep_history) + "; COMMIT",
        3);
}

}  // namespace relstore::mysql::json_mirror
