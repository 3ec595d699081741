// `relstore convert`: copy a database between SQLite, PostgreSQL, MySQL and Data.fs, in
// history-free and history-preserving modes (design.md §8; zodbconvert-compatible).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "relstore/storage.h"

namespace relstore {

struct ConvertProgress {
  uint64_t transactions = 0;
  uint64_t records = 0;
  uint64_t bytes = 0;
  uint64_t total_transactions = 0;  // of the source; 0 when unknown
  double seconds = 0;
};

struct ConvertOptions {
  std::string source;       // URI
  std::string destination;  // URI
  // Blob directory beside a Data.fs source, or a database's shared blob directory
  // (RelStorage's shared-blob-dir true). Without it a database's blobs are read from its
  // blob_chunk table.
  std::string source_blob_dir;
  // Blob directory beside a Data.fs destination; for a database destination, whose blobs
  // go into its blob_chunk table, the blob cache to fill as well (optional).
  std::string destination_blob_dir;
  bool incremental = false;  // continue after the destination's last TID
  bool clear = false;        // empty the destination first
  bool dry_run = false;      // count what would be copied; change nothing
  bool verify = false;       // compare source and destination afterwards
  bool skip_blobs = false;   // copy blob records without their contents, and say how many
  // Database destinations are loaded in batches of about this many records, each one
  // database transaction: an interrupted run leaves whole batches (whole source
  // transactions) and resumes with `incremental`.
  uint64_t batch_records = 20000;
  // When it becomes true (say, on SIGINT), the run stops after the source transaction or
  // batch in hand, which it finishes: the destination holds whole transactions and
  // `incremental` continues it. The report then says `interrupted`.
  const std::atomic<bool>* stop = nullptr;
  std::function<void(const ConvertProgress&)> on_progress;
  std::function<void(const std::string&)> on_log;
};

struct ConvertReport {
  ConvertProgress done;
  std::optional<Tid> started_after;  // incremental: the destination's last TID
  bool current_only = false;         // a history-free destination: current records only
  bool cleared = false;
  uint64_t blobs_copied = 0;
  uint64_t blobs_skipped = 0;
  std::optional<Tid> first_tid, last_tid;  // of what was (or would be) copied
  std::vector<std::string> differences;    // from verify; empty when equal
  // verify: the source's last TID when it had commits after the copy's last transaction
  // (left out of the comparison)
  std::optional<Tid> source_moved_to;
  uint64_t mirror_rows = 0;  // JSON mirror rows written to catch the in-commit mirror up
  // incremental from a history-free source: objects it deleted since the last run, which
  // were removed from the destination (or would be, in a dry run)
  uint64_t deletions = 0;
  bool verified = false;
  bool interrupted = false;  // `stop` ended the run early: the destination is incomplete
  // `stop` came once the copy was complete: while the JSON mirror caught up, or during the
  // verification (then not verified; `differences` holds those found before it).
  bool interrupted_after_copy = false;
};

// Runs a conversion. Throws ConfigError for bad options, StorageError when the source is
// damaged, the destination is unreachable, of the wrong kind, or not empty (without
// `incremental` or `clear`) — in which case nothing was changed — or when a blob cannot be
// copied (the destination then holds only whole transactions, and the error says so).
ConvertReport convert(const ConvertOptions& options);

class BlobDir;

// Where the committed blob file of revision `tid` of `oid` is, or none when it has no
// blob: a blob directory's file, or a database's blob as StorageInstance::load_blob gives it.
using BlobFiles = std::function<std::optional<std::string>(Oid oid, Tid tid)>;
BlobFiles blob_files(const BlobDir& dir);
BlobFiles blob_files(StorageInstance& instance);

// Compares two storages: transaction by transaction when both keep history, else current
// record by current record. Returns at most `limit` differences; empty means equal.
// `stop` becoming true ends the comparison early; `complete` (when given) then says false,
// and the differences are only those found so far.
// With the destination's blob directory, the blob file of every blob record is compared
// too: with the source's file (`source_blobs`), or found missing there and then expected
// missing in the destination as well.
// `until` (a copy's last TID) leaves out what the source committed after it: transactions
// after it, and objects whose current revision is newer. `source_last` (when given) gets
// the source's last TID as the comparison saw it.
std::vector<std::string> compare_storages(
    Storage& source, Storage& destination, size_t limit = 20, const BlobDir* source_blobs = nullptr,
    const BlobDir* destination_blobs = nullptr, const std::atomic<bool>* stop = nullptr,
    bool* complete = nullptr, std::optional<Tid> until = std::nullopt, Tid* source_last = nullptr);
// The same with the blobs of either side wherever they are (a database's too).
std::vector<std::string> compare_storages(Storage& source, Storage& destination, size_t limit,
                                          const BlobFiles* source_blobs,
                                          const BlobFiles* destination_blobs,
                                          const std::atomic<bool>* stop, bool* complete,
                                          std::optional<Tid> until, Tid* source_last);

// True when a record's class pickle names ZODB.blob.Blob.
bool is_blob_record(std::string_view record);

}  // namespace relstore
