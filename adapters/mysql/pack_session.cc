#include "adapters/mysql/pack_session.h"

#include <exception>

#include "adapters/mysql/driver.h"

namespace relstore::mysql {
namespace {

class MysqlPackSession : public backend::PackSession {
 public:
  MysqlPackSession(const Settings& s, backend::Adapter& counter)
      : conn_(open_connection(s, Role::store, &counter)) {
    // RelStorage's pack lock, a named lock of the session: it goes with the connection.
    if (conn_->query_int("SELECT GET_LOCK(CONCAT(DATABASE(), '.pack'), 0)") != 1) {
      throw StorageError("another pack of " + s.connect.describe +
                         " is running (relstore's or RelStorage's); nothing was changed");
    }
  }
  ~MysqlPackSession() override {
    conn_->rollback();
    // Let go of the pack lock before the connection goes: the server ends a closed
    // session later, and a pack started right after this one would find it still taken.
    try {
      conn_->query_int("SELECT RELEASE_LOCK(CONCAT(DATABASE(), '.pack'))");
    } catch (const std::exception&) {
      // The connection is broken: the server drops the lock with the session.
    }
  }

  void begin(bool locks) override {
    conn_->exec("START TRANSACTION");
    if (!locks) return;
    // The mirror's lock as set_mirror_mode takes it (votes hold it shared), then the
    // commit lock.
    if (has_table("relstore_json_mirror_lock")) {
      conn_->exec("SELECT id FROM relstore_json_mirror_lock WHERE id = 0 FOR UPDATE",
                  Context::commit);
    }
    conn_->exec("SELECT tid FROM commit_row_lock WHERE tid = 0 FOR UPDATE", Context::commit);
  }

  uint64_t exec(const std::string& sql) override {
    uint64_t n = 0;
    conn_->batch(
        sql + "; SELECT ROW_COUNT()", 2,
        [&](Rows& r) {
          if (r.next()) n = static_cast<uint64_t>(r.int64(0));
        },
        Context::other);
    return n;
  }

  std::vector<std::pair<int64_t, std::optional<Bytes>>> rows(const std::string& sql) override {
    std::vector<std::pair<int64_t, std::optional<Bytes>>> out;
    conn_->batch(
        sql, 1,
        [&](Rows& r) {
          while (r.next()) out.emplace_back(r.int64(0), r.optional_bytes(1));
        },
        Context::other);
    return out;
  }

  void commit() override { conn_->exec("COMMIT", Context::commit); }

  bool has_table(const std::string& name) override {
    return conn_->query_int(
               "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() "
               "AND TABLE_NAME = '" +
               name + "'") > 0;
  }

  bool excludes_voted_commits() override { return has_table("relstore_json_mirror_lock"); }
  // MariaDB 10.6 and MySQL 8.0 have SKIP LOCKED.
  std::string skip_locked() const override { return "FOR UPDATE SKIP LOCKED"; }

  // Neither lets a DELETE read its own table in a subquery; a derived table is read first.
  std::string delete_superseded_sql(Tid pack_tid, int64_t from, int64_t to) const override {
    const std::string range = "zoid BETWEEN " + std::to_string(from) + " AND " + std::to_string(to);
    return "DELETE s FROM object_state s JOIN (SELECT zoid, MAX(tid) AS keep_tid FROM "
           "object_state WHERE " +
           range + " AND tid <= " + std::to_string(pack_tid.sql()) +
           " GROUP BY zoid) k ON s.zoid = k.zoid AND s.tid < k.keep_tid";
  }

 private:
  std::unique_ptr<Connection> conn_;
};

}  // namespace

std::unique_ptr<backend::PackSession> open_pack_session(const Settings& settings,
                                                        backend::Adapter& counter) {
  return std::make_unique<MysqlPackSession>(settings, counter);
}

}  // namespace relstore::mysql
