// The iterator's records of a history-preserving transaction, each with the revision whose
// data it repeats (DataRecord::data_txn, conformance line 25). RelStorage's schema keeps no
// column for it; an undo copies the state from before the revision it supersedes
// (`prev_tid`), so that revision's own predecessor is named when its md5 and size match
// the record's, and none otherwise. Two primary-key lookups a record.
#pragma once

// The statement with the transaction's TID as `param`, the dialect's placeholder ("?",
// "$1"): a macro, so that every dialect's constant is one literal of the same text.
#define RELSTORE_ITER_RECORDS_HP(param)                                                   \
  "SELECT o.zoid, o.state, q.tid FROM object_state o "                                    \
  "LEFT JOIN object_state p ON p.zoid = o.zoid AND p.tid = o.prev_tid "                   \
  "LEFT JOIN object_state q ON q.zoid = o.zoid AND q.tid = p.prev_tid AND q.md5 = o.md5 " \
  "AND q.state_size = o.state_size "                                                      \
  "WHERE o.tid = " param " ORDER BY o.zoid"
