// An instance's snapshot: a read transaction on its own connection (mover + poller).
#pragma once

#include <memory>

#include "adapters/sqlite/adapter.h"
#include "adapters/sqlite/queries.h"
#include "backend/deletion_mark.h"

namespace relstore::sqlite {

class SqliteLoadConnection : public backend::LoadConnection {
 public:
  SqliteLoadConnection(const Location& loc, backend::Adapter& adapter);
  ~SqliteLoadConnection() override;

  backend::PollResult begin_snapshot(std::optional<Tid> since) override;
  void end_snapshot() noexcept override;
  std::optional<backend::StateRow> load_current(Oid oid) override;
  std::optional<backend::StateRow> load_revision(Oid oid, Tid tid) override;
  std::optional<backend::BeforeRow> load_before(Oid oid, Tid tid) override;
  bool exists(Oid oid) override;
  std::vector<HistoryEntry> history(Oid oid, size_t size) override;
  std::vector<std::pair<Oid, backend::StateRow>> current_records(Oid from,
                                                                 std::optional<Tid> before,
                                                                 size_t limit) override;
  std::vector<HistoryEntry> undoable_transactions(Tid below, size_t limit) override;
  std::vector<std::pair<Oid, std::optional<Bytes>>> transaction_records(Tid tid) override;
  bool load_blob(Oid oid, Tid tid, const backend::BlobSink& sink) override;

 private:
  // Runs one read of the snapshot. SQLite ends the read transaction by itself after some
  // errors (I/O); the reads after that would see the newest data, not the snapshot's, so
  // they are refused until the next begin_snapshot, as PostgreSQL refuses statements after
  // an error.
  template <class Read>
  auto read(Read&& body) -> decltype(body());

  std::unique_ptr<Db> db_;
  bool snapshot_lost_ = false;
  const Queries& q_;
  bool keep_history_;
  bool has_deletion_mark_ = false;  // history-free database with relstore_hf_deletion
  backend::PollMark mark_;  // deletion record (history-free) or first TID (history-preserving)
};

}  // namespace relstore::sqlite
