// What a poll reads besides the changes it lists, to tell when it cannot list them.
//
// History-free: deleting an object removes its row (as RelStorage does), so no poll can
// list the deletion. relstore records the TID of the last commit that deleted anything
// (table relstore_hf_deletion, a migration); zap_all writes minus the TID of its own
// time there, so that every zap moves the record too. Databases without the table (not
// migrated) poll as before.
// History-preserving: the first transaction's TID. A zap followed by a commit leaves a
// last TID above the one an instance saw, and only the history's new start shows it.
// A history replaced by one with the same start (convert --clear from an older copy of the
// source) shows only in the transaction a connection's previous snapshot ended with (its
// "tip") being gone, which history-preserving polls also read.
//
// A poll that sees its mark move reports "everything changed".
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "relstore/timestamp.h"
#include "relstore/types.h"

namespace relstore::backend {

// The name of the one-row table; its row has id 0 and the TID.
inline constexpr const char* kDeletionMarkTable = "relstore_hf_deletion";

// What zap_all writes into the record: minus the TID of the zap's time (the zapping
// client's clock). No value a reader saw before equals it (deletions write positive
// TIDs, earlier zaps earlier times), and a connection's first poll can tell whether the
// zap came after what its instance had seen.
inline std::string zap_deletion_mark_sql(double unix_now) {
  return "UPDATE relstore_hf_deletion SET tid = " +
         std::to_string(-TimeStamp::from_unix(unix_now).tid().sql()) + " WHERE id = 0";
}

// The TID a deletion record holds: none (zero) while it holds a zap's mark.
inline Tid deletion_tid(Tid record) { return record.sql() > 0 ? record : Tid(); }
// A history-free database's last TID from its rows' newest and its deletion record: a
// deletion of the object with the newest TID is a finished transaction whose TID no row
// keeps.
inline Tid last_finished(Tid rows_newest, Tid record) {
  return std::max(rows_newest, deletion_tid(record));
}
// When a mark last moved: a deletion's or a first transaction's TID, a zap's time.
inline Tid mark_time(Tid mark) { return mark.sql() < 0 ? Tid::from_sql(-mark.sql()) : mark; }

// What one load connection knows of its mark: of its previous snapshots, across reconnects.
class PollMark {
 public:
  // `mark`: the mark as the new snapshot sees it (none where the dialect reads none).
  // True when it moved since the previous snapshot of this connection, or, on its first
  // snapshot, when it is past `since`.
  // `tip_kept`: false when the tip (below) is gone.
  bool moved(std::optional<Tid> mark, std::optional<Tid> since, bool tip_kept = true) {
    bool moved = (since && !tip_kept) || std::exchange(rows_below_record_, false);
    if (mark && since) moved = moved || (last_ ? *mark != *last_ : mark_time(*mark) > *since);
    last_ = mark;
    return moved;
  }
  // History-free: last_finished(), noting for moved() when the rows' newest TID changed to
  // one at or below the deletion record's. A relstore commit comes after the record; this
  // is another writer's (RelStorage chooses its TID after the rows' newest alone, and
  // deletes rows without the record), and a poll for TIDs after the record cannot list it.
  Tid last_finished(Tid rows_newest, Tid record) {
    if (rows_newest_ && rows_newest != *rows_newest_ && rows_newest <= deletion_tid(record)) {
      rows_below_record_ = true;
    }
    rows_newest_ = rows_newest;
    return backend::last_finished(rows_newest, record);
  }
  // The last TID of this connection's previous snapshot (zero: none yet), which a
  // history-preserving poll checks is still a transaction; set after every snapshot.
  Tid tip() const { return tip_; }
  void set_tip(Tid tip) { tip_ = tip; }

 private:
  std::optional<Tid> last_;
  Tid tip_;
  std::optional<Tid> rows_newest_;
  bool rows_below_record_ = false;
};

}  // namespace relstore::backend
