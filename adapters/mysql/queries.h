// The SQL that differs between history-free and history-preserving MySQL databases.
#pragma once

#include <string>

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
// History-preserving: the records of transaction ?, each with the revision whose data it
// repeats (the iterator's data_txn, conformance line 25): an undo copies the state from
// before the revision it supersedes, so that revision's predecessor, when its md5 and
// size match; none otherwise. Two primary-key lookups a record.
inline constexpr const char* kIterRecordsHp =
    "SELECT o.zoid, o.state, q.tid FROM object_state o "
    "LEFT JOIN object_state p ON p.zoid = o.zoid AND p.tid = o.prev_tid "
    "LEFT JOIN object_state q ON q.zoid = o.zoid AND q.tid = p.prev_tid AND q.md5 = o.md5 "
    "AND q.state_size = o.state_size "
    "WHERE o.tid = ? ORDER BY o.zoid";
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
