// Bulk loads for `relstore convert` into a PostgreSQL database.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "adapters/postgresql/adapter.h"

namespace relstore::postgresql {

// Takes relstore's bulk-load lock (advisory, two-key form (1919249523, 4), on the session)
// on `conn`, waiting up to `timeout` seconds; keeps it when `keep`, else lets go of it at
// once (backend::Adapter::wait_for_bulk_loads says why). Throws backend::bulk_load_busy.
bool take_bulk_lock(Conn& conn, double timeout, bool keep, const std::atomic<bool>* stop = nullptr);

// Writes a batch per database transaction, in one message: a binary COPY into a temporary
// table of its session, then a few set-based statements that move the rows into the
// permanent tables and move the OID allocator past them. Two or three round trips per
// batch, whatever its size. Holds the bulk-load lock from construction to destruction and
// takes no commit lock: convert is the only writer (on a history-free database that was
// empty when the load began, records of objects the load has not written yet are copied
// straight into object_state; a row someone else inserted meanwhile makes that batch
// fail, changing nothing).
class BulkLoader {
 public:
  BulkLoader(const Location& loc, backend::Adapter& counter);

  // History-free: upserts the records (one per oid) with their TIDs, deletes absent ones.
  // `expected_last`: Adapter::bulk_apply_current.
  void apply_current(std::span<const backend::BulkRecord> records,
                     std::optional<Tid> expected_last);
  // History-preserving: transaction rows, revisions and current_object, as restore would.
  void restore(std::span<const TransactionRecord> transactions, std::optional<Tid> expected_last);

 private:
  // Objects tracked in `written_` (a bitmap by oid); larger oids count as written.
  static constexpr uint64_t kTrackedOids = uint64_t{1} << 27;
  // Whether this load may have written a row for `oid` (always, unless it began on an
  // empty database).
  bool maybe_written(Oid oid) const;
  void note_written(Oid oid);

  const Location& loc_;
  std::unique_ptr<Conn> conn_;
  std::optional<std::vector<bool>> written_;  // oids this load wrote, when it began empty
};

}  // namespace relstore::postgresql
