// The SQL that differs between history-free and history-preserving PostgreSQL databases,
// and the statements both modes share. Parameters and results are binary.
#pragma once

#include "adapters/postgresql/driver.h"
#include "backend/iter_records.h"

namespace relstore::postgresql {

struct Queries {
  Statement last_tid;         // () -> tid
  Statement poll;             // (since) -> zoid, tid
  Statement load_current;     // (zoid) -> tid, state
  Statement load_before;      // (zoid, tid) -> tid, state, next tid
  Statement history;          // (zoid, limit) -> tid, size, user, description, extension
  Statement current_records;  // (from zoid, limit) -> zoid, tid, state
  Statement records_before;   // (from zoid, tid, limit) -> the same, as of before tid
  Statement
      iter_transactions;  // (after tid, stop, limit) -> tid, packed, user, description, extension
  const char* count_objects;
  const char* count_transactions;
};

const Queries& queries(bool keep_history);

// Shared by both modes.
inline constexpr Statement kBeginSnapshot = {"", "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"};
inline constexpr Statement kBegin = {"", "BEGIN"};
inline constexpr Statement kRollback = {"", "ROLLBACK"};
// RelStorage's commit lock: the row of commit_row_lock, locked until the transaction ends
// (its lock_and_choose_tid). relstore_finish takes it the same way, so commits of both
// exclude each other. Not an advisory lock: RelStorage holds the session advisory lock -1
// through a whole pack or undo, and commits must not wait for that.
inline constexpr const char* kCommitLockSql = "SELECT tid FROM commit_row_lock FOR UPDATE";
// For what takes the commit lock and then writes object rows (zap_all, bulk batches): the
// table whose rows voters lock, taken first. Voters lock rows, then wait for the commit
// lock at finish; taking the commit lock first and then waiting for a voter's row closed
// a cycle that PostgreSQL's deadlock detector broke by failing one side (a finish, after
// its vote). EXCLUSIVE mode waits for those voters and lets plain reads through.
inline const char* object_table_lock_sql(bool keep_history) {
  return keep_history ? "LOCK TABLE current_object IN EXCLUSIVE MODE"
                      : "LOCK TABLE object_state IN EXCLUSIVE MODE";
}
inline constexpr Statement kCommitLock = {"", kCommitLockSql};
// Polls' marks (src/backend/deletion_mark.h): history-free deletions, and where a
// history-preserving database's history starts.
inline constexpr Statement kDeletionMark = {"deletion_mark",
                                            "SELECT tid FROM relstore_hf_deletion WHERE id = 0"};
inline constexpr Statement kFirstTransaction = {
    "first_transaction", "SELECT COALESCE(MIN(tid), 0) FROM \"transaction\" WHERE tid > 0"};
inline constexpr Statement kTipKept = {
    "tip_kept",
    "SELECT CASE WHEN EXISTS (SELECT 1 FROM \"transaction\" WHERE tid = $1) THEN 1 ELSE 0 END"};
// A blob's content: each chunk is a large object (RelStorage writes one, chunk_num 0).
// Unprepared: blobs are rare next to loads.
// A blob's large objects with the first piece of each ($3 bytes: most blobs are read in
// this one round trip), then the rest of each in pieces (load_blob streams them).
inline constexpr Statement kLoadBlob = {
    "",
    "SELECT chunk::bigint, lo_get(chunk, 0, $3::bigint::integer) FROM blob_chunk "
    "WHERE zoid = $1 AND tid = $2 ORDER BY chunk_num"};
inline constexpr Statement kReadLargeObject = {
    "", "SELECT lo_get($1::bigint::oid, $2::bigint, $3::bigint::integer)"};
inline constexpr Statement kLoadRevision = {
    "load_revision", "SELECT tid, state FROM object_state WHERE zoid = $1 AND tid = $2"};
inline constexpr Statement kExists = {"exists",
                                      "SELECT 1 FROM object_state WHERE zoid = $1 LIMIT 1"};
inline constexpr Statement kIterRecords = {
    "iter_records", "SELECT zoid, state FROM object_state WHERE tid = $1 ORDER BY zoid"};
// History-preserving, with data_txn (backend/iter_records.h).
inline constexpr Statement kIterRecordsHp = {"iter_records_hp", RELSTORE_ITER_RECORDS_HP("$1")};
// History-preserving: (below, limit) -> tid, 0, user, description, extension (undo_log).
inline constexpr Statement kUndoableTransactions = {
    "undoable_transactions",
    "SELECT tid, 0::bigint, username, description, COALESCE(extension, ''::bytea) "
    "FROM \"transaction\" WHERE packed = FALSE AND tid > 0 AND tid < $1 "
    "ORDER BY tid DESC LIMIT $2"};
inline constexpr const char* kStateBytes =
    "SELECT COALESCE(SUM(state_size), 0)::bigint FROM object_state";
// Which database this is, however it was reached (host name, address or socket): the
// cluster's start time, to the microsecond, and port, with the database's name. Readable
// by any role, unlike the cluster's system identifier on some managed servers.
inline constexpr const char* kIdentity =
    "SELECT 'postgresql ' || pg_postmaster_start_time()::text || ' port ' || "
    "current_setting('port') || ' database ' || current_database()";

}  // namespace relstore::postgresql
