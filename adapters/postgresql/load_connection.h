// An instance's snapshot: a REPEATABLE READ READ ONLY transaction on its own connection
// (mover + poller).
#pragma once

#include <memory>

#include "adapters/postgresql/adapter.h"
#include "adapters/postgresql/queries.h"
#include "backend/deletion_mark.h"

namespace relstore::postgresql {

// The connection stays in libpq's pipeline mode, so ending a snapshot costs no wait: the
// ROLLBACK is sent at once (the server is not left idle in a transaction, which would hold
// back vacuum) and its reply is read with the next request's. A poll that finds nothing is
// therefore one round trip from one application transaction to the next.
class PgLoadConnection : public backend::LoadConnection {
 public:
  PgLoadConnection(const Location& loc, backend::Adapter& adapter);
  ~PgLoadConnection() override;

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
  void connect();
  backend::PollResult try_begin_snapshot(std::optional<Tid> since);
  // Runs one prepared statement and returns its result (one round trip).
  Result run(const Statement& s, const Params& p);

  const Location& loc_;
  backend::Adapter& adapter_;
  const Queries& q_;
  std::unique_ptr<Conn> conn_;
  bool in_snapshot_ = false;  // a transaction is open on the server
  // What a poll reads besides the changes (backend/deletion_mark.h); null: nothing.
  const Statement* mark_statement() const;
  backend::PollMark mark_;  // deletion record (history-free) or first TID (history-preserving)
};

}  // namespace relstore::postgresql
