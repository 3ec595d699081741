// History-preserving bulk loads for `relstore convert` into MySQL/MariaDB.
#pragma once

#include <atomic>
#include <memory>
#include <span>
#include <vector>

#include "adapters/mysql/adapter.h"
#include "adapters/mysql/oid_allocator.h"

namespace relstore::mysql {

// Takes relstore's bulk-load lock on `conn`'s session, waiting up to `timeout` seconds:
// a named lock (GET_LOCK) per database, since InnoDB has no advisory locks; a session keeps
// it until it lets go or ends. Keeps it when `keep`, else lets go at once
// (backend::Adapter::wait_for_bulk_loads says why). Throws backend::bulk_load_busy.
// Waits up to `timeout` seconds (bulk_load_busy then); false when `stop` was set first.
bool take_bulk_lock(Connection& conn, double timeout, bool keep,
                    const std::atomic<bool>* stop = nullptr);

// Begins a batch with `expected_last` (Adapter::bulk_apply_current): locks the rows of
// `zoids` that voters lock (object_state history-free, current_object history-preserving),
// in OID order, then takes the commit lock, both in `conn`'s transaction, and throws
// an error (backend::expect_bulk_last_tid) unless the newest finished TID is that one. Rows before
// the commit lock, as voters take them: the other way round, a batch holding the commit
// lock waited for a voter's row while the voter waited for the commit lock at finish.
void expect_last_tid(Connection& conn, const Settings& settings, std::vector<int64_t> zoids,
                     Tid expected_last);

// Writes batches of whole transactions, each batch one database transaction, with
// multi-row INSERTs bounded by max_allowed_packet: what restore would write (prev_tid
// from current_object, the MD5 of each state, is_empty, packed), without the per-commit
// procedures and locks, holding the bulk-load lock from construction to destruction.
class BulkLoader {
 public:
  BulkLoader(const Settings& settings, backend::Adapter& counter);
  ~BulkLoader();

  // `expected_last`: Adapter::bulk_apply_current.
  void restore(std::span<const TransactionRecord> transactions, std::optional<Tid> expected_last);
  bool healthy() const { return conn_->healthy(); }

 private:
  const Settings& settings_;
  std::unique_ptr<Connection> conn_;
  OidAllocator oids_;
};

}  // namespace relstore::mysql
