// The SQL that differs between history-free and history-preserving SQLite databases.
#pragma once

#include "backend/iter_records.h"
#include "relstore/types.h"

namespace relstore::sqlite {

struct Queries {
  const char* last_tid;
  const char* poll;             // (since) -> zoid, tid
  const char* load_current;     // (zoid) -> tid, state
  const char* load_before;      // (zoid, tid) -> tid, state, next tid
  const char* history;          // (zoid, limit) -> tid, size, user, description, extension
  const char* current_records;  // (from zoid, limit) -> zoid, tid, state
  const char* records_before;   // (from zoid, tid, limit) -> the same, as of before tid
  const char* current_tid;      // (zoid) -> tid
  const char* conflicts;        // () -> zoid, committed tid, prev_tid, committed state
  const char* count_objects;
  const char* count_transactions;
  const char* iter_transactions;  // (start, stop) -> tid, packed, user, description, extension
};

const Queries& queries(bool keep_history);

class Db;
// The newest finished TID: the last transaction's, or history-free the newest row's or,
// when the database has one, the deletion record's, whichever is later
// (backend/deletion_mark.h).
Tid newest_finished_tid(Db& db, bool keep_history, bool has_deletion_mark);

// Shared by both modes.
// Both modes' blob_chunk have zoid, tid and chunk_num (in different orders).
// A blob's chunk rows, whose values load_blob reads in pieces (IncrementalBlob).
inline constexpr const char* kLoadBlob =
    "SELECT rowid FROM blob_chunk WHERE zoid = ? AND tid = ? ORDER BY chunk_num";
inline constexpr const char* kInsertBlobChunk =
    "INSERT INTO blob_chunk (zoid, tid, chunk_num, chunk) VALUES (?, ?, ?, ?)";
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
// History-preserving commits and restores.
inline constexpr const char* kTidTaken = "SELECT 1 FROM \"transaction\" WHERE tid = ?";
inline constexpr const char* kInsertTransaction =
    "INSERT INTO \"transaction\" (tid, packed, is_empty, username, description, extension) "
    "VALUES (?, ?, ?, ?, ?, ?)";

// Polls' marks (src/backend/deletion_mark.h): where the history starts (history-preserving)
inline constexpr const char* kFirstTransaction =
    "SELECT COALESCE(MIN(tid), 0) FROM \"transaction\" WHERE tid > 0";
// The transaction a connection's previous snapshot ended with is still there (1 or 0).
inline constexpr const char* kTipKept =
    "SELECT CASE WHEN EXISTS (SELECT 1 FROM \"transaction\" WHERE tid = ?) THEN 1 ELSE 0 END";
// and history-free deletions.
inline constexpr const char* kDeletionMark = "SELECT tid FROM relstore_hf_deletion WHERE id = 0";
inline constexpr const char* kMarkDeletion = "UPDATE relstore_hf_deletion SET tid = ? WHERE id = 0";

}  // namespace relstore::sqlite
