// An instance's snapshot: a REPEATABLE READ, READ ONLY transaction on its own connection
// (mover + poller).
#pragma once

#include <memory>

#include "adapters/mysql/adapter.h"
#include "adapters/mysql/queries.h"
#include "adapters/mysql/snapshot_closer.h"
#include "backend/deletion_mark.h"

namespace relstore::mysql {

class MysqlLoadConnection : public backend::LoadConnection {
 public:
  MysqlLoadConnection(const Settings& settings, backend::Adapter& adapter, SnapshotCloser& closer);
  ~MysqlLoadConnection() override;

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
  // Takes the connection back from the closer if end_snapshot handed it over.
  void reclaim();
  // Starts a snapshot on conn_ (one round trip).
  backend::PollResult start(std::optional<Tid> since);
  // The connection of the current snapshot; throws DisconnectedError once it was lost
  // (the next begin_snapshot reconnects).
  Connection& conn();

  const Settings& settings_;
  backend::Adapter& adapter_;
  SnapshotCloser& closer_;
  const Queries& q_;
  std::unique_ptr<Connection> conn_;
  bool in_snapshot_ = false;
  bool handed_over_ = false;  // conn_ is with the closer
  backend::PollMark mark_;    // deletion record (history-free) or first TID (history-preserving)
};

}  // namespace relstore::mysql
