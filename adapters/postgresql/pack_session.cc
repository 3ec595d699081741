#include "adapters/postgresql/pack_session.h"

#include <exception>
#include <utility>
#include <vector>

#include "adapters/postgresql/driver.h"
#include "adapters/postgresql/queries.h"

namespace relstore::postgresql {
namespace {

class PgPackSession : public backend::PackSession {
 public:
  PgPackSession(const Location& loc, backend::Adapter& counter)
      : conn_(open_conn(loc, Role::admin, &counter)), mirror_(loc.json_mirror) {
    // RelStorage's pack lock, session locks that go with the connection: its pack and
    // undo hold -1 (docs/postgresql.md); design.md names -2. Both, in one statement.
    if (query("SELECT CASE WHEN pg_try_advisory_lock(-1) THEN CASE WHEN "
              "pg_try_advisory_lock(-2) THEN 1 ELSE 0 + 0 * pg_advisory_unlock(-1)::int END "
              "ELSE 0 END")
            .int64(0, 0) == 0) {
      throw StorageError("another pack of " + loc.connect.describe +
                         " is running (relstore's or RelStorage's, or a RelStorage undo); "
                         "nothing was changed");
    }
  }
  ~PgPackSession() override {
    conn_->rollback_quietly();
    // Let go of the pack lock before the connection goes: the server ends a closed
    // session later, and a pack started right after this one would find it still taken.
    try {
      query("SELECT pg_advisory_unlock(-2), pg_advisory_unlock(-1)");
    } catch (const std::exception&) {
      // The connection is broken: the server drops the lock with the session.
    }
  }

  void begin(bool locks) override {
    std::string sql = "BEGIN";
    // The mirror's lock as set_mirror_mode takes it (votes hold it shared), then the
    // commit lock.
    if (locks && mirror_) sql += "; SELECT pg_advisory_xact_lock(1919249523, 3)";
    if (locks) sql += std::string("; ") + kCommitLockSql;
    conn_->simple(sql, locks ? Context::commit : Context::other);
  }

  uint64_t exec(const std::string& sql) override { return query(sql).affected(); }

  std::vector<std::pair<int64_t, std::optional<Bytes>>> rows(const std::string& sql) override {
    const Result r = query(sql);
    std::vector<std::pair<int64_t, std::optional<Bytes>>> out;
    out.reserve(static_cast<size_t>(r.rows()));
    for (int i = 0; i < r.rows(); ++i) out.emplace_back(r.int64(i, 0), r.optional_bytes(i, 1));
    return out;
  }

  void commit() override { conn_->simple("COMMIT", Context::commit); }

  bool has_table(const std::string& name) override {
    // In the current schema only, where relstore reads its tables.
    return query(
               "SELECT COUNT(*) FROM pg_tables WHERE schemaname = current_schema() AND "
               "tablename = '" +
               name + "'")
               .int64(0, 0) > 0;
  }

  bool excludes_voted_commits() override { return mirror_; }
  std::string skip_locked() const override { return "FOR UPDATE SKIP LOCKED"; }
  std::string delete_superseded_sql(Tid pack_tid, int64_t from, int64_t to) const override {
    return backend::delete_superseded_where_exists(pack_tid, from, to);
  }

 private:
  Result query(const std::string& sql) {
    std::vector<Result> results = conn_->simple(sql, Context::other);
    return std::move(results.back());
  }

  std::unique_ptr<Conn> conn_;
  bool mirror_;
};

}  // namespace

std::unique_ptr<backend::PackSession> open_pack_session(const Location& loc,
                                                        backend::Adapter& counter) {
  return std::make_unique<PgPackSession>(loc, counter);
}

}  // namespace relstore::postgresql
