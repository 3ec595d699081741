// The contract between the generic storage (src/) and a database dialect (adapters/).
// A dialect implements these three classes; everything database-independent (2PC state
// machine, conflict resolution, caches, OID blocks) stays in src/.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "backend/current_faults.h"
#include "mirror/rows.h"
#include "relstore/errors.h"
#include "relstore/json_mirror.h"
#include "relstore/pickle.h"
#include "relstore/storage.h"
#include "schema/migrations.h"

namespace relstore::backend {

// One revision as a reader sees it. `state` none: the object is absent (deleted or its
// creation undone) in this revision.
struct StateRow {
  Tid tid;
  std::optional<Bytes> state;
};

struct BeforeRow {
  Tid start;
  std::optional<Bytes> state;
  std::optional<Tid> end;
};

struct PollResult {
  Tid last_tid;  // the newest TID the new snapshot sees (zero when empty)
  // (oid, tid) committed after `since`; none when no `since` was given.
  std::optional<std::vector<std::pair<Oid, Tid>>> changes;
  // The JSON mirror's mode, when the dialect reads it along with the poll.
  std::optional<MirrorMode> mirror_mode;
  // The mark the poll read (backend/deletion_mark.h), where the dialect reads one.
  std::optional<Tid> mark;
};

// Takes a blob's content piece by piece (LoadConnection::load_blob).
using BlobSink = std::function<void(std::string_view)>;
// The pieces a dialect reads a large chunk in (PostgreSQL's large objects, SQLite's one
// chunk per blob), and writes it in where it streams.
inline constexpr size_t kBlobPiece = 4 << 20;

// A connection whose read transaction is an instance's snapshot.
class LoadConnection {
 public:
  virtual ~LoadConnection() = default;
  // Ends the current read transaction and begins a new snapshot; when `since` is given,
  // also lists what was committed after it. One round trip where the dialect allows.
  virtual PollResult begin_snapshot(std::optional<Tid> since) = 0;
  // Ends the read transaction so the connection is not left idle in one. Never throws.
  virtual void end_snapshot() noexcept = 0;

  // The current revision in the snapshot, none if the object never existed.
  virtual std::optional<StateRow> load_current(Oid oid) = 0;
  // Exactly revision `tid`, none if there is no such revision.
  virtual std::optional<StateRow> load_revision(Oid oid, Tid tid) = 0;
  // The newest revision strictly before `tid`, none if there is none.
  virtual std::optional<BeforeRow> load_before(Oid oid, Tid tid) = 0;
  // Whether any revision of `oid` exists in the snapshot.
  virtual bool exists(Oid oid) = 0;
  // Newest first, at most `size`; empty if the object is unknown.
  virtual std::vector<HistoryEntry> history(Oid oid, size_t size) = 0;
  // Up to `limit` current records with oid >= `from`, in OID order; with `before`, the
  // records that were current just before that TID (a historical instance's view).
  virtual std::vector<std::pair<Oid, StateRow>> current_records(Oid from, std::optional<Tid> before,
                                                                size_t limit) = 0;
  // History-preserving (undo): up to `limit` transactions older than `below` that are not
  // packed, newest first, with `size` zero.
  virtual std::vector<HistoryEntry> undoable_transactions(Tid below, size_t limit) = 0;
  // History-preserving (undo): the revisions transaction `tid` wrote, in OID order (state
  // none: the object is absent in it).
  virtual std::vector<std::pair<Oid, std::optional<Bytes>>> transaction_records(Tid tid) = 0;
  // Hands the content of revision `tid`'s blob (blob_chunk's chunks in order) to `sink`
  // in pieces of at most kBlobPiece bytes or one stored chunk, so that a large blob never
  // sits in memory whole. False, having called nothing, when that revision has no blob in
  // the snapshot.
  virtual bool load_blob(Oid oid, Tid tid, const BlobSink& sink) = 0;
};

// A record on its way into the database.
struct PendingRecord {
  Oid oid;
  Tid prev_tid;                // the serial the writer read; zero for a new object
  std::optional<Bytes> state;  // none: delete (store) or absent revision (restore)
  // History-preserving only: the lowercase hex MD5 of the state; "" for a deletion, as
  // RelStorage's deleteObject writes it (its undo check compares md5s, and NULL equals
  // nothing); none (NULL) history-free and for a restore's absent revision.
  std::optional<std::string> md5;
};

// A blob file going into the database with its object's record.
struct PendingBlob {
  Oid oid;
  std::string path;  // read by the store connection; the instance owns the file
};

struct ReadCurrent {
  Oid oid;
  Tid serial;
};

struct VoteRequest {
  std::span<const PendingRecord> records;  // sorted by OID
  std::span<const ReadCurrent> read_current;
  std::span<const PendingBlob> blobs;  // sorted by OID; finish stores them with the TID
  bool check_conflicts = true;         // false for restore
  std::optional<Tid> forced_tid;       // the TID finish will use, when the caller chose it
  double lock_timeout = 30.0;
};

// An object whose committed TID differs from the serial the writer read.
struct ConflictRow {
  Oid oid;
  Tid committed;
  Tid given;
  std::optional<Bytes> committed_state;
};

struct FinishRequest {
  const TransactionMetaData* meta = nullptr;
  // The records as they are to be committed (conflicts resolved), sorted by OID: for
  // dialects that send them with the finish rather than keep them on the server.
  std::span<const PendingRecord> records;
  // In-commit JSON mirror rows for this commit's records (their tid is the commit's);
  // null when the mirror is not in in-commit mode.
  const mirror::Batch* mirror = nullptr;
  std::optional<Tid> forced_tid;  // restore/convert: use this TID as is
  char status = ' ';
  double now = 0;  // the client clock, for dialects that choose TIDs on the client
  double lock_timeout = 30.0;
};

// A pooled connection for two-phase commit and OID allocation (READ COMMITTED).
class StoreConnection {
 public:
  virtual ~StoreConnection() = default;
  // Uploads the records (and blob contents), takes readCurrent and object locks, and
  // returns conflicts. Finish writes the blobs' blob_chunk rows with the commit's TID.
  // Throws ReadConflictError for a stale readCurrent, LockConflictError on lock timeout.
  virtual std::vector<ConflictRow> vote(const VoteRequest& req) = 0;
  // Replaces uploaded records whose conflicts were resolved.
  virtual void replace(std::span<const PendingRecord> records) = 0;
  // Takes the commit lock, chooses the TID, moves the records, commits. Returns the TID.
  virtual Tid finish(const FinishRequest& req) = 0;
  // Rolls back whatever is in progress and releases every lock. Never throws.
  virtual void rollback() noexcept = 0;
  // Allocates fresh OIDs in its own transaction: one or more whole blocks of 16 (block n =
  // OIDs 16n-15 … 16n, never OID 0), returned in ascending order.
  virtual std::vector<Oid> allocate_oids() = 0;
  // Makes sure later blocks start above the block holding `oid` (block n = 16n-15 … 16n),
  // so the allocator never hands out `oid` or anything below it. Own transaction.
  virtual void set_min_oid(Oid oid) = 0;
  // Whether the connection is still usable (false after a lost connection).
  virtual bool healthy() const { return true; }
  // Whether the last vote found the JSON mirror in in-commit mode, for dialects that read
  // it there (under locks that keep it from changing before finish); none if not read.
  virtual std::optional<bool> mirror_in_commit() const { return std::nullopt; }
};

// The mirror as a dialect reports it.
struct MirrorState {
  MirrorMode mode = MirrorMode::off;
  Tid last_tid;
  Tid database_tid;
  uint64_t rows = 0;
  uint64_t errors = 0;
  uint64_t pending = 0;  // current states with tid > last_tid
};

// Current states committed after a TID, read in one snapshot, whole transactions only.
struct MirrorChanges {
  std::vector<std::pair<Oid, StateRow>> states;  // ascending tid
  Tid database_tid;                              // the snapshot's last TID
  bool more = false;  // the limit cut the list: ask again from the last tid returned
};

// The error when the bulk-load lock (wait_for_bulk_loads) stays taken for `seconds`.
inline StorageError bulk_load_busy(double seconds) {
  return StorageError(
      "another bulk load is writing to this database (relstore convert holds a lock until "
      "it ends; one that was killed, until its server session has finished the batch it had "
      "sent); waited " +
      std::to_string(static_cast<int>(seconds)) + " s (commit_lock_timeout). Nothing was changed.");
}

// A bulk batch's check, under the commit lock, that the database's newest finished TID
// (`now`) is where the load expected it; otherwise another process committed meanwhile
// and the batch must not be written.
inline void expect_bulk_last_tid(Tid now, Tid expected) {
  if (now == expected) return;
  throw StorageError(
      "another process committed to this database during the bulk load (its "
      "last transaction is " +
      now.hex() + ", the load expected " + expected.hex() + "): the batch was not written");
}

// A current record for a history-free bulk load (convert).
struct BulkRecord {
  Oid oid;
  Tid tid;
  std::optional<Bytes> state;  // none: the object is absent (delete its row)
};

// A connection for pack (src/storage/pack.cc), whose SQL is the same on every dialect but
// for what this session answers. It holds RelStorage's pack lock from open to
// destruction, so no two packs (relstore's or RelStorage's) run at once; destroying it
// rolls back a transaction that was not committed.
class PackSession {
 public:
  virtual ~PackSession() = default;
  // Starts a transaction (READ COMMITTED). With `locks`: the JSON mirror's lock
  // exclusively, where the database has it (relstore's votes hold it shared until their
  // commit, so none is between vote and finish once it is taken), then the commit lock.
  virtual void begin(bool locks) = 0;
  // One statement without results; returns the rows it changed.
  virtual uint64_t exec(const std::string& sql) = 0;
  // One query whose columns are an integer and, optionally, bytes (NULL: none).
  virtual std::vector<std::pair<int64_t, std::optional<Bytes>>> rows(const std::string& sql) = 0;
  virtual void commit() = 0;
  virtual bool has_table(const std::string& name) = 0;
  // Whether begin(true) keeps out relstore commits that are between vote and finish (the
  // JSON mirror's lock, or SQLite's write lock); without it garbage collection is unsafe.
  virtual bool excludes_voted_commits() = 0;
  // What ends a SELECT that locks rows without waiting for those another transaction
  // holds ("" where the transaction's lock is the whole database's, SQLite).
  virtual std::string skip_locked() const = 0;
  // DELETE of the revisions superseded at or before `pack_tid` (history-preserving) of
  // the objects `from` … `to`: dialects disagree on deleting from a table a subquery reads.
  virtual std::string delete_superseded_sql(Tid pack_tid, int64_t from, int64_t to) const = 0;
};

// delete_superseded_sql where a DELETE may read its own table in a subquery.
inline std::string delete_superseded_where_exists(Tid pack_tid, int64_t from, int64_t to) {
  const std::string p = std::to_string(pack_tid.sql());
  const std::string range = " BETWEEN " + std::to_string(from) + " AND " + std::to_string(to);
  // The range on both sides: PostgreSQL otherwise hashes the whole table for the subquery.
  return "DELETE FROM object_state WHERE zoid" + range + " AND tid < " + p +
         " AND EXISTS (SELECT 1 FROM object_state n WHERE n.zoid" + range +
         " AND n.zoid = object_state.zoid AND n.tid > object_state.tid AND n.tid <= " + p + ")";
}

// One per database: opens connections and answers database-wide questions.
class Adapter {
 public:
  virtual ~Adapter() = default;
  virtual std::string dialect() const = 0;
  virtual bool keep_history() const = 0;
  virtual std::string describe() const = 0;  // redacted URI for names and messages

  virtual std::unique_ptr<LoadConnection> open_load() = 0;
  virtual std::unique_ptr<StoreConnection> open_store() = 0;
  // An iterator over a snapshot of its own, taken now.
  virtual std::unique_ptr<TransactionIterator> open_iterator(std::optional<Tid> start,
                                                             std::optional<Tid> stop) = 0;
  virtual StorageInfo info() = 0;
  // Storage::identity.
  virtual std::string identity() = 0;
  // Removes every object and transaction and resets the OID allocator, holding the
  // bulk-load lock (wait_for_bulk_loads) while it does. An unfinished conversion's note
  // goes too: nothing of it is left.
  virtual void zap_all() = 0;
  // Storage::set_unfinished_conversion: the row of relstore_conversion.
  virtual bool set_unfinished_conversion(const std::optional<UnfinishedConversion>& note) = 0;

  // Bulk loading for `relstore convert`: no conflict checks and no locks beyond the
  // database transaction's. Dialects that have it say so here; convert falls back to
  // restore through a StorageInstance otherwise.
  virtual bool supports_bulk() const { return false; }
  // History-free: writes `records` (one per oid) in one transaction — rows upserted with
  // their own TIDs, absent ones deleted — and moves the OID allocator past them.
  // With `expected_last`, the batch first takes the commit lock and writes nothing
  // (expect_bulk_last_tid) unless the newest finished TID is that one: a commit by
  // another process since convert last looked would otherwise end up ahead of the batch's
  // older TIDs, where polls never report them.
  virtual void bulk_apply_current(std::span<const BulkRecord> records,
                                  std::optional<Tid> expected_last = std::nullopt) {
    (void)records;
    (void)expected_last;
    throw StorageError(dialect() + ": bulk loading is not supported");
  }
  // History-preserving: writes whole transactions (ascending TIDs, new to the database)
  // in one database transaction, exactly as restore would, and moves the OID allocator
  // past them.
  virtual void bulk_restore(std::span<const TransactionRecord> transactions,
                            std::optional<Tid> expected_last = std::nullopt) {
    (void)transactions;
    (void)expected_last;
    throw StorageError(dialect() + ": bulk loading is not supported");
  }
  // Takes the bulk-load lock (waiting up to the lock timeout, bulk_load_busy after) and
  // keeps it until bulk_finish, so that convert can check where the destination stands
  // while no other load can write to it. The batches take it too if this was not called.
  virtual void bulk_begin() {}
  // The bulk load is over: undo whatever the dialect changed for it.
  virtual void bulk_finish() {}
  // Waits (up to the lock timeout) until no bulk load is writing to the database. A load
  // holds a lock on its own server session from its first batch to its end; convert takes
  // it and lets go before it reads where the destination stands. Why: a conversion killed
  // right after sending a batch leaves a server session that still commits it, and a
  // resume that read the destination first would start before that batch and copy it
  // again. zap_all holds the same lock, for a killed `convert --clear`. Nothing to wait
  // for where a dead process cannot commit (SQLite). False when `stop` was set before the
  // lock was free (Ctrl-C of a conversion waiting for another one).
  virtual bool wait_for_bulk_loads(const std::atomic<bool>* stop) {
    (void)stop;
    return true;
  }

  // Storage::pack. Throws StorageError while another pack runs.
  virtual std::unique_ptr<PackSession> open_pack() {
    throw StorageError(dialect() + ": pack is not supported");
  }

  // `relstore verify`: history-preserving objects whose current_object row does not name
  // their newest revision (backend/current_faults.h), read in one snapshot. History-free
  // databases have no such row to check.
  virtual CurrentFaults current_faults() { return {}; }

  // --- JSON mirror (json-mirror.md). Dialects without it refuse with SchemaError. ---
  // How this dialect's JSON column wants decoded text (PostgreSQL's jsonb refuses NUL).
  virtual DecodeOptions mirror_decode_options() const { return {}; }
  virtual MirrorState mirror_state() { throw SchemaError(dialect() + ": no JSON mirror yet"); }
  // Sets the mode under the commit lock, so no commit straddles the change.
  virtual void set_mirror_mode(MirrorMode mode) {
    (void)mode;
    throw SchemaError(dialect() + ": no JSON mirror yet");
  }
  virtual MirrorChanges mirror_changes(Tid since, size_t limit) {
    (void)since;
    (void)limit;
    throw SchemaError(dialect() + ": no JSON mirror yet");
  }
  // Mirror rows whose object no longer exists (history-free deletions leave no trace to
  // follow), at most `limit`.
  virtual std::vector<Oid> mirror_orphans(size_t limit) {
    (void)limit;
    throw SchemaError(dialect() + ": no JSON mirror yet");
  }
  // Writes a follow/rebuild batch in one transaction. Each row, error and delete is
  // applied only if its TID is still the object's current state, so a batch read from an
  // older snapshot never overwrites what a later commit wrote. Then moves last_tid as
  // `advance` says, when given and last_tid is still where the batch started.
  virtual void mirror_apply(const mirror::Batch& batch, std::optional<mirror::Advance> advance) {
    (void)batch;
    (void)advance;
    throw SchemaError(dialect() + ": no JSON mirror yet");
  }
  // Empties object_json and the error list and sets last_tid to zero.
  virtual void mirror_clear() { throw SchemaError(dialect() + ": no JSON mirror yet"); }
  // Under the commit lock, moves last_tid to the newest TID if everything newer than it is
  // mirrored (mirror::settle_sql); `enable` ends with it.
  virtual void mirror_settle() { throw SchemaError(dialect() + ": no JSON mirror yet"); }
  // Waits up to `seconds` for commits (PostgreSQL: LISTEN/NOTIFY); by default just sleeps.
  virtual void mirror_wait(double seconds) {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  }

  // Versions recorded in relstore_schema, ascending; empty when the table is missing.
  virtual std::vector<int> applied_migrations() {
    throw SchemaError(dialect() + ": migrations are not supported yet");
  }
  // Applies one migration for this database's mode and records it in relstore_schema (in
  // one transaction where the dialect has transactional DDL).
  virtual void apply_migration(const Migration& migration) {
    throw SchemaError(dialect() + ": cannot apply migration " + migration.name);
  }

  uint64_t round_trips() const { return round_trips_.load(std::memory_order_relaxed); }
  // Connections call this once per server round trip.
  void count_round_trip(uint64_t n = 1) { round_trips_.fetch_add(n, std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> round_trips_{0};
};

}  // namespace relstore::backend
