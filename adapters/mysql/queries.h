// The SQL that differs between history-free and history-preserving MySQL databases.
#pragma once

#include <string>

#include "backend/iter_records.h"
#include "relstore/types.h"

namespace relstore::mysql {

struct Queries {
  const char* last_tid;
  const char* poll;             // "… WHERE tid > " followed by the since TID
  const char* load_current;     // (zoid) -> tid, state
  const char* load_before;      // (zoid, tid) -> tid, state, next tid
  const char* history;          // (zoid, limit) -> tid, size, user, description, extension
  const char* current_records;  // (from zoid, limit) -> zoid, tid, state
  const char* records_before;   // (from zoid, tid, limit) -> the same, as of before tid
  const char* count_objects;
  const char* count_transactions;
  const char* iter_transactions;  // (start, stop, limit) -> tid, packed, user, description, ext
};

const Queries& queries(bool keep_history);

// Shared by both modes.
// A blob's content: LONGBLOB chunks of up to 1 MiB (both modes' tables have the columns).
// A blob's chunks from chunk_num ?, a few at a time: the connector holds a whole result
// in memory, so load_blob asks for pages of kBlobChunksPerPage (the LIMIT).
inline constexpr int64_t kBlobChunksPerPage = 4;
inline constexpr const char* kLoadBlob =
    "SELECT chunk_num, chunk FROM blob_chunk WHERE zoid = ? AND tid = ? AND chunk_num >= ? "
    "ORDER BY chunk_num LIMIT 4";
inline constexpr const char* kLoadRevision =
    "SELECT tid, state FROM object_state WHERE zoid = ? AND tid = ?";
inline constexpr const char* kExists = "SELECT 1 FROM object_state WHERE zoid = ? LIMIT 1";
inline constexpr const char* kIterRecords =
    "SELECT zoid, state FROM object_state WHERE tid = ? ORDER BY zoid";
// History-preserving, with data_txn (backend/iter_records.h).
inline constexpr const char* kIterRecordsHp = RELSTORE_ITER_RECORDS_HP("?");
inline constexpr const char* kStateBytes = "SELECT COALESCE(SUM(state_size), 0) FROM object_state";
// History-preserving: (below, limit) -> tid, 0, user, description, extension (undo_log).
inline constexpr const char* kUndoableTransactions =
    "SELECT tid, 0, username, description, COALESCE(extension, X'') FROM \"transaction\" "
    "WHERE packed = 0 AND tid > 0 AND tid < ? ORDER BY tid DESC LIMIT ?";
// Polls' marks (src/backend/deletion_mark.h): history-free deletions, and where a
// history-preserving database's history starts.
inline constexpr const char* kDeletionMark = "SELECT tid FROM relstore_hf_deletion WHERE id = 0";
inline constexpr const char* kFirstTransaction =
    "SELECT COALESCE(MIN(tid), 0) FROM \"transaction\" WHERE tid > 0";
// Whether the transaction a connection's previous snapshot ended with is still there (1 or
// 0); the poll is one text, so the TID goes in as a number.
inline std::string tip_kept_sql(Tid tip) {
  return "SELECT CASE WHEN EXISTS (SELECT 1 FROM \"transaction\" WHERE tid = " +
         std::to_string(tip.sql()) + ") THEN 1 ELSE 0 END";
}
// Which database this is, however it was reached (host name, address or socket).
inline constexpr const char* kIdentity =
    "SELECT CONCAT('mysql ', @@hostname, ' port ', @@port, ' datadir ', @@datadir, "
    "' database ', DATABASE())";

}  // namespace relstore::mysql
