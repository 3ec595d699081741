#include "adapters/sqlite/pack_session.h"

#include "adapters/sqlite/driver.h"

namespace relstore::sqlite {
namespace {

// No pack lock of its own: the write lock every transaction here takes serialises packs,
// and a second pack only finds less to remove.
class SqlitePackSession : public backend::PackSession {
 public:
  explicit SqlitePackSession(const Location& loc) : db_(open_main(loc, Role::store)) {}
  ~SqlitePackSession() override {
    if (db_->in_transaction()) db_->rollback_quietly();
  }

  // The write lock is SQLite's commit lock, and votes hold it until their finish: with it
  // no commit is half-way. Taken for the pruning too, as any write takes it.
  void begin(bool) override { db_->exec("BEGIN IMMEDIATE"); }

  uint64_t exec(const std::string& sql) override {
    Stmt s(db_->handle(), sql, false);
    s.run();
    return static_cast<uint64_t>(db_->changes());
  }

  std::vector<std::pair<int64_t, std::optional<Bytes>>> rows(const std::string& sql) override {
    Stmt s(db_->handle(), sql, false);
    std::vector<std::pair<int64_t, std::optional<Bytes>>> out;
    while (s.step()) out.emplace_back(s.int64(0), s.optional_blob(1));
    return out;
  }

  void commit() override { db_->exec("COMMIT"); }
  bool has_table(const std::string& name) override { return db_->has_table(name); }
  // A vote holds the write lock until its finish.
  bool excludes_voted_commits() override { return true; }
  std::string skip_locked() const override { return ""; }
  std::string delete_superseded_sql(Tid pack_tid, int64_t from, int64_t to) const override {
    return backend::delete_superseded_where_exists(pack_tid, from, to);
  }

 private:
  std::unique_ptr<Db> db_;
};

}  // namespace

std::unique_ptr<backend::PackSession> open_pack_session(const Location& loc) {
  return std::make_unique<SqlitePackSession>(loc);
}

}  // namespace relstore::sqlite
