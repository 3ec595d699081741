// The JSON mirror on PostgreSQL (migration 0003, sql/postgresql/relstore_json_mirror_*.sql):
// the in-commit finish, and the follow/rebuild/status calls over a connection of their own.
#pragma once

#include <memory>
#include <mutex>
#include <optional>

#include "adapters/postgresql/adapter.h"

namespace relstore::postgresql {
class FinishParams;  // store_connection.h
}

namespace relstore::postgresql::json_mirror {

// In every vote, after BEGIN: the mode, under the lock that keeps it until finish.
inline constexpr const char* kModeSql = "SELECT relstore_json_mirror_mode()";
inline constexpr Statement kVoteMode = {"vote_mode", kModeSql};

// What a store connection prepares when the database has the mirror's tables: kVoteMode
// and the in-commit finish.
extern const std::vector<Statement> kStoreStatements;

// The finish of an in-commit commit: relstore_finish_mirror (the move, then the rows of
// `req.mirror`) and COMMIT in one pipelined message, one round trip. Returns the TID.
// `f` holds relstore_finish's parameters; the rows' are added to them.
Tid finish_in_commit(Conn& conn, const backend::FinishRequest& req, FinishParams& f);

// The mirror calls of backend::Adapter for one database. Thread-safe (one call at a time).
class Mirror {
 public:
  Mirror(const Location& loc, backend::Adapter& counter) : loc_(loc), counter_(counter) {}

  backend::MirrorState state();
  void set_mode(MirrorMode mode);
  backend::MirrorChanges changes(Tid since, size_t limit);
  std::vector<Oid> orphans(size_t limit);
  void apply(const mirror::Batch& batch, std::optional<mirror::Advance> advance);
  void clear();
  void settle();
  // LISTEN/NOTIFY on a connection of its own (see mirror_wait in adapter.h).
  void wait(double seconds);

 private:
  // The connection for everything but waiting; checks once that the mirror tables exist.
  Conn& conn();
  // Runs `body` in a READ COMMITTED transaction that rolls back on any error.
  template <class F>
  void write_txn(F&& body);

  const Location& loc_;
  backend::Adapter& counter_;
  std::mutex mu_;
  std::unique_ptr<Conn> conn_;
  std::unique_ptr<Conn> listener_;
};

}  // namespace relstore::postgresql::json_mirror
