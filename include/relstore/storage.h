// The storage interface: ZODB's IStorage + IMVCCStorage (design.md §6, conformance.md).
#pragma once

#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "relstore/types.h"
#include "relstore/uri.h"

namespace relstore {

// What ZODB's transaction object carries to the storage. The storage identifies "the
// transaction begun" by the address of this object, as ZODB does by identity.
struct TransactionMetaData {
  Bytes user;
  Bytes description;
  Bytes extension;  // the pickled extension dict, stored and returned verbatim
};

struct LoadResult {
  Bytes data;
  Tid tid;
};

struct LoadBeforeResult {
  Bytes data;
  Tid start;               // the revision's serial
  std::optional<Tid> end;  // serial of the next revision; none if `start` is current
};

struct HistoryEntry {
  Tid tid;
  double time = 0;  // seconds since the Unix epoch
  Bytes user;
  Bytes description;
  Bytes extension;
  uint64_t size = 0;  // bytes of the record's data
};

struct DataRecord {
  Oid oid;
  Tid tid;
  std::optional<Bytes> data;    // none: the object is absent in this revision
  std::optional<Tid> data_txn;  // for records that reuse another revision's data (undo)
};

struct TransactionRecord {
  Tid tid;
  char status = ' ';  // ' ' committed, 'p' packed
  Bytes user;
  Bytes description;
  Bytes extension;
  std::vector<DataRecord> records;
};

// Yields transactions in TID order from a snapshot taken when it was created.
class TransactionIterator {
 public:
  virtual ~TransactionIterator() = default;
  // Fills `out` with the next transaction; false at the end.
  virtual bool next(TransactionRecord& out) = 0;
};

struct RecordIterResult {
  Oid oid;
  Tid tid;
  Bytes data;
  std::optional<Oid> next;  // cursor for the following call; none at the end
};

// One entry of StorageInstance::undo_log, as ZODB's undoLog describes a transaction.
struct UndoInfo {
  std::string id;  // what undo() takes: undo_id(tid)
  Tid tid;
  double time = 0;  // seconds since the Unix epoch
  Bytes user;
  Bytes description;
  Bytes extension;  // the pickled extension dict, verbatim
};

using UndoFilter = std::function<bool(const UndoInfo&)>;

// ZODB's undo id of a transaction: the base64 of its TID's 8 bytes (12 characters).
std::string undo_id(Tid tid);
// The TID an undo id names. Throws UndoError for text that is not an undo id.
Tid tid_of_undo_id(std::string_view id);

// What a conflict resolver is given: the state the writer started from (none when the
// storage no longer has it, e.g. history-free), the committed state and the new state.
struct ConflictInput {
  Oid oid;
  Tid old_serial;
  Tid committed_serial;
  const Bytes* old_state;  // may be null
  const Bytes& committed_state;
  const Bytes& new_state;
};

// Returns the merged state, or none when the conflict cannot be resolved. An exception
// thrown by the resolver counts as "cannot resolve".
using ConflictResolver = std::function<std::optional<Bytes>(const ConflictInput&)>;

// One thread's view of a storage: an MVCC snapshot and a two-phase commit.
// Not thread-safe: use one instance per thread or connection.
class StorageInstance {
 public:
  virtual ~StorageInstance() = default;

  // --- MVCC ---
  // Starts a new snapshot and returns the OIDs other committers changed since the
  // previous one; none means "everything" (the instance cannot tell).
  virtual std::optional<std::vector<Oid>> poll_invalidations() = 0;
  // Ends the current snapshot so that the next read or poll sees the newest data.
  virtual void sync() = 0;
  // Ends the read transaction now without starting a new one (the application transaction
  // ended); no connection is left idle in a transaction.
  virtual void release_snapshot() = 0;
  // Gives back the instance's connections; the instance is unusable afterwards.
  virtual void release() = 0;

  // --- reads ---
  // The current revision in this snapshot. Throws POSKeyError if absent or deleted.
  virtual LoadResult load(Oid oid) = 0;
  // The newest revision strictly before `tid`; none if the object was created at or
  // after `tid`. Throws POSKeyError for an unknown OID.
  virtual std::optional<LoadBeforeResult> load_before(Oid oid, Tid tid) = 0;
  // Exactly revision `tid`. Throws POSKeyError if there is no such revision.
  virtual Bytes load_serial(Oid oid, Tid tid) = 0;
  // Newest first, at most `size` entries. Throws POSKeyError for an unknown OID.
  virtual std::vector<HistoryEntry> history(Oid oid, size_t size = 1) = 0;
  // The newest committed TID, zero when the storage is empty.
  virtual Tid last_transaction() = 0;

  // --- writes ---
  virtual Oid new_oid() = 0;
  // Begins a commit. `tid` forces the transaction's TID (restore/convert).
  virtual void tpc_begin(const TransactionMetaData& txn, std::optional<Tid> tid = std::nullopt,
                         char status = ' ') = 0;
  // `serial` is the revision the writer read; none or zero for a new object.
  virtual void store(Oid oid, std::optional<Tid> serial, const Bytes& data,
                     const TransactionMetaData& txn) = 0;
  // Writes a revision as is, without conflict checks; none data records an absent object.
  virtual void restore(Oid oid, Tid serial, const std::optional<Bytes>& data,
                       const TransactionMetaData& txn) = 0;
  // readCurrent: fail the commit if `oid` is no longer at `serial`, and keep others from
  // changing it until this transaction ends.
  virtual void check_current_serial(Oid oid, Tid serial, const TransactionMetaData& txn) = 0;
  // Deletes an object; `serial` must be current.
  virtual void delete_object(Oid oid, Tid serial, const TransactionMetaData& txn) = 0;
  // Uploads, locks and detects conflicts. Returns the OIDs whose state was resolved.
  virtual std::vector<Oid> tpc_vote(const TransactionMetaData& txn) = 0;
  // Commits; `on_tid` runs with the TID before other instances of this storage can see the
  // commit. Does not fail for data reasons after a successful vote.
  virtual Tid tpc_finish(const TransactionMetaData& txn,
                         const std::function<void(Tid)>& on_tid = {}) = 0;
  // Discards the transaction and releases every lock. Never throws; an unknown
  // transaction is ignored.
  virtual void tpc_abort(const TransactionMetaData& txn) noexcept = 0;

  // --- undo (history-preserving; conformance.md lines 22-25) ---
  // The transactions that can be undone (not packed), newest first: of those `filter`
  // accepts, positions `first` … `last`-1; a negative `last` means -`last` entries from
  // `first` (ZODB's undoLog). Empty on a history-free storage.
  virtual std::vector<UndoInfo> undo_log(int64_t first = 0, int64_t last = -20,
                                         const UndoFilter& filter = {});
  // Within the transaction begun: gives every object transaction `id` changed back the
  // state it had before that transaction (an object it created becomes absent). Returns
  // those OIDs. Throws UndoError, leaving the transaction as it was, when `id` names no
  // transaction that can be undone, when it created the root object, or when a later
  // transaction changed one of its objects and no conflict resolver merges the change.
  virtual std::vector<Oid> undo(std::string_view id, const TransactionMetaData& txn);

  // --- blobs (conformance.md lines 37-38; the storage needs a blob directory) ---
  // store() of a blob record whose content is the file `blob_file`. The storage takes the
  // file (it is moved away; the caller must not use it again) and removes it if the
  // transaction is aborted.
  virtual void store_blob(Oid oid, std::optional<Tid> serial, const Bytes& data,
                          const std::string& blob_file, const TransactionMetaData& txn);
  // restore() of a blob record (ZODB's restoreBlob: copying a storage), taking `blob_file`
  // as store_blob does.
  virtual void restore_blob(Oid oid, Tid serial, const Bytes& data, const std::string& blob_file,
                            const TransactionMetaData& txn);
  // The path of the committed blob file of revision `tid` of `oid`, read-only. Throws
  // POSKeyError when that revision has no blob.
  virtual std::string load_blob(Oid oid, Tid tid);
  // The committed blob, opened for reading (load_blob's file).
  std::ifstream open_committed_blob(Oid oid, Tid tid);

  // --- iteration ---
  virtual std::unique_ptr<TransactionIterator> iterator(std::optional<Tid> start = std::nullopt,
                                                        std::optional<Tid> stop = std::nullopt) = 0;
  // Walks current records in OID order; pass the previous result's `next`.
  virtual std::optional<RecordIterResult> record_iternext(std::optional<Oid> next) = 0;

  virtual bool is_read_only() const = 0;
};

// A conversion copying into a database (Storage::set_unfinished_conversion).
struct UnfinishedConversion {
  std::string source;      // the source's URI, without its password
  std::string started_at;  // UTC, as 2026-12-01T23:55:00Z
};

// Facts about a database, for `relstore info`.
struct StorageInfo {
  std::string backend;  // "sqlite", "postgresql", "mysql", "file"
  bool keep_history = false;
  uint64_t objects = 0;
  uint64_t transactions = 0;
  uint64_t size_bytes = 0;  // bytes of object state (a Data.fs: of the file)
  Tid last_tid;
  std::string schema_version;
  // History-free databases that record deletions (relstore_hf_deletion): the TID of the
  // last commit that deleted objects, 0 when none did.
  std::optional<Tid> last_deletion;
  // Set while a `relstore convert` into it has not finished (killed, failed, stopped):
  // the database then holds a part of the source.
  std::optional<UnfinishedConversion> unfinished_conversion;
};

// Storage::pack: what to pack, as zodbpack asks for it.
struct PackOptions {
  // Revisions superseded at or before this TID go, as do (with gc) objects no current
  // object reaches from the root then and nothing written after it references. Later
  // than the last transaction: packs up to the last transaction.
  Tid pack_tid;
  bool gc = true;
  // zodbpack's --prepack-only: read the graph and count what the pack would remove, and
  // remove nothing (there is no saved state: the next pack reads the graph again).
  bool prepack_only = false;
  // Refuse, before removing anything, when an object the pack keeps references one that
  // does not exist or that the pack would remove (a reference that already raises
  // POSKeyError, whose target's remaining history the pack would erase).
  bool check_refs = false;
  // Runs between reading the object graph and removing anything (tests commit there).
  std::function<void()> after_mark;
};

struct PackResult {
  Tid pack_tid;                       // what was packed to; zero when the storage is empty
  uint64_t objects_removed = 0;       // unreachable, or deleted at the pack time
  uint64_t revisions_removed = 0;     // superseded revisions (history-preserving)
  uint64_t transactions_removed = 0;  // left with no revisions (history-preserving)
  uint64_t objects_locked = 0;        // removable but locked by a committing transaction: kept
  bool prepack_only = false;          // the counts are what a pack would remove; nothing was
};

// Counters an adapter keeps about its server traffic.
struct StorageStats {
  uint64_t round_trips = 0;
  uint64_t commits = 0;
  uint64_t cache_hits = 0;
  uint64_t cache_misses = 0;
};

// A database: options, shared cache, OID blocks and a pool of connections. Thread-safe.
class Storage {
 public:
  virtual ~Storage() = default;

  // A new MVCC instance; it starts with no snapshot.
  virtual std::unique_ptr<StorageInstance> new_instance() = 0;
  // A read-only instance whose loads are as of just before `before`.
  virtual std::unique_ptr<StorageInstance> historical_instance(Tid before) = 0;

  virtual void set_conflict_resolver(ConflictResolver resolver) = 0;

  virtual std::string name() const = 0;
  virtual std::string sort_key() const = 0;
  virtual bool is_read_only() const = 0;
  virtual bool keep_history() const = 0;
  // Number of current objects (exact).
  virtual uint64_t len() = 0;
  // Bytes of stored state.
  virtual uint64_t size() = 0;
  virtual StorageInfo info() = 0;
  // What names the database itself, however it was reached: the canonical path of a file
  // or directory, or the server's identity with the database's name. Two handles on one
  // database report the same text (convert refuses to copy a database onto itself).
  virtual std::string identity() = 0;
  virtual StorageStats stats() const = 0;
  // Removes every object and transaction and resets the OID allocator (convert --clear).
  virtual void zap_all() = 0;
  // Records that a conversion copies into this database, or with nullopt that every
  // transaction is in; info() reports it until then. zap_all forgets it. False when the
  // database has no place for it yet (a MySQL or SQLite database made before the migration
  // that adds it: `relstore migrate up`).
  virtual bool set_unfinished_conversion(const std::optional<UnfinishedConversion>& note) = 0;
  // Removes old revisions and unreachable objects (docs/operations.md, "Packing") while
  // other processes go on committing. Throws ReadOnlyError on a read-only storage and
  // StorageError where the backend cannot pack.
  virtual PackResult pack(const PackOptions& options);
  virtual void close() = 0;
};

// Opens the storage a URI names (see uri.h). Throws ConfigError for a bad URI or option,
// SchemaError when the database is not usable as asked, StorageError otherwise.
std::unique_ptr<Storage> open_storage(std::string_view uri);
std::unique_ptr<Storage> open_storage(const StorageUri& uri, const StorageOptions& options);

}  // namespace relstore
