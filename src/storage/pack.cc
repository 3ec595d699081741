// Pack over a database adapter (Storage::pack; docs/operations.md, "Packing").
//
// Mark, in one snapshot: the references of every object as it stood at the pack time
// (history-free: its current state) and of every revision written after it. The root
// and everything written after the pack time are live, and so is what they reach.
// Sweep, on a PackSession, in batches that are transactions of their own, so commits wait
// for one batch at most: history-preserving databases first lose the revisions superseded
// at the pack time (no lock needed: commits only add newer ones). Then, under the locks a
// commit's finish takes, each batch marks the commits that came since the last look (none
// can finish meanwhile, and no relstore commit is between vote and finish) and removes the
// objects of the batch that are still unreachable, but for those a committing transaction
// (RelStorage's, say) holds locked: the next pack takes them. Last, transactions up to the
// pack time are marked packed and those left without revisions go.
#include <algorithm>
#include <filesystem>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "backend/deletion_mark.h"
#include "backend/oid_order.h"
#include "relstore/errors.h"
#include "relstore/pickle.h"
#include "storage/db_storage.h"
#include "storage/object_graph.h"

namespace relstore {

PackResult Storage::pack(const PackOptions&) {
  throw StorageError(name() + ": this backend cannot pack (relstore packs PostgreSQL, MySQL and " +
                     "SQLite databases; pack a Data.fs with ZODB's zodbpack)");
}

namespace {

// Statements list their oids inline, this many at a time.
constexpr size_t kChunk = 500;
// Objects removed in one transaction under the commit lock.
constexpr size_t kRemoveBatch = 1000;
// Pruning deletes the superseded revisions of this many consecutive OIDs per transaction.
constexpr int64_t kPruneSpan = 10000;
// Transactions marked packed, or removed, per transaction.
constexpr size_t kTransactionBatch = 5000;

struct Marks {
  ObjectGraph graph;
  std::vector<uint64_t> live;                  // the root, later writes
  std::unordered_map<uint64_t, Tid> existing;  // objects at the pack time, with their tid
};

void add_refs(Marks& m, Oid oid, const std::optional<Bytes>& state) {
  if (!state) return;
  try {
    m.graph.add(oid, *state);
  } catch (const PickleError& e) {
    throw StorageError("pack: cannot read the references of oid " + oid.hex() + " (" + e.what() +
                       "), so what it keeps alive is unknown (a pack without garbage " +
                       "collection, --no-gc, and without --check-refs does not read references)");
  }
}

// "1, 2, 3" for an IN list.
std::string in_list(std::span<const int64_t> ids) {
  std::string out;
  for (const int64_t id : ids) {
    if (!out.empty()) out += ", ";
    out += std::to_string(id);
  }
  return out;
}

// Runs `make(list)` for each chunk of `ids`; returns the sum of what it returns.
template <class F>
uint64_t chunked(const std::vector<int64_t>& ids, F&& make) {
  uint64_t n = 0;
  for (size_t i = 0; i < ids.size(); i += kChunk) {
    const size_t end = std::min(ids.size(), i + kChunk);
    n += make(in_list(std::span<const int64_t>(ids.data() + i, end - i)));
  }
  return n;
}

// Reads the object graph in one snapshot (the references only with `refs`); returns the
// snapshot's last TID.
Tid mark(backend::Adapter& adapter, Tid requested, bool gc, bool refs, Marks& m, Tid& pack_tid) {
  auto load = adapter.open_load();
  const Tid last = load->begin_snapshot(std::nullopt).last_tid;
  pack_tid = std::min(requested, last);
  const bool hp = adapter.keep_history();
  // The states at the pack time; at the last transaction (a pack to now) those are the
  // current ones, which the databases find without looking at older revisions.
  const std::optional<Tid> before =
      hp && pack_tid < last ? std::optional<Tid>(Tid(pack_tid.value() + 1)) : std::nullopt;
  Oid from;
  for (;;) {
    const auto page = backend::current_records_in_oid_order(*load, from, 1000, before);
    for (const auto& [oid, row] : page) {
      if (row.tid > pack_tid) {
        m.live.push_back(oid.value());
      } else {
        m.existing.emplace(oid.value(), row.tid);
      }
      if (refs) add_refs(m, oid, row.state);
    }
    if (page.size() < 1000 || page.back().first.value() == ~uint64_t{0}) break;
    from = Oid(page.back().first.value() + 1);
  }
  load->end_snapshot();
  // Without a root everything would be garbage: more likely a database that is not a
  // ZODB application's (or not all of one) than one to empty.
  if (gc && !m.existing.count(0) && std::find(m.live.begin(), m.live.end(), 0) == m.live.end() &&
      !m.existing.empty()) {
    throw StorageError(
        "pack: the database has no root object (oid 0) at the pack time, so garbage "
        "collection would remove every object; pack without it (--no-gc)");
  }
  if (hp && refs && pack_tid < last) {
    // Everything written after the pack time is live, with what it references.
    auto it = adapter.open_iterator(Tid(pack_tid.value() + 1), last);
    TransactionRecord txn;
    while (it->next(txn)) {
      for (const auto& r : txn.records) {
        m.live.push_back(r.oid.value());
        add_refs(m, r.oid, r.data);
      }
    }
  }
  return last;
}

// The first column of a query's rows.
std::vector<int64_t> ids(backend::PackSession& s, const std::string& sql) {
  std::vector<int64_t> out;
  for (const auto& [id, unused] : s.rows(sql)) out.push_back(id);
  return out;
}

// Tells a database that was emptied while the pack ran (zap_all, as `convert --clear`
// does, perhaps followed by a copy with older TIDs, which the batches' look at "what was
// committed since" would miss): the first transaction's TID (history-preserving), or a
// zap's mark in the deletion record (history-free, deletion_mark.h). The pack stops
// rather than remove anything of what came in.
class EmptiedCheck {
 public:
  EmptiedCheck(backend::PackSession& s, bool hp) : s_(s), hp_(hp), at_start_(read()) {}
  // In each transaction that removes anything, before it does.
  void check() {
    if (read() == at_start_) return;
    throw StorageError(
        "pack: the database was emptied (zap, `convert --clear`) while the "
        "pack ran; pack it again if it should be packed");
  }
  // After the pack itself moved the deletion record (over a zap's mark from before it
  // began), in the same transaction.
  void moved_by_pack() { at_start_ = read(); }

 private:
  int64_t read() {
    if (hp_) return s_.rows("SELECT MIN(tid), NULL FROM \"transaction\" WHERE tid > 0").at(0).first;
    const int64_t mark = s_.rows(std::string("SELECT tid, NULL FROM ") +
                                 backend::kDeletionMarkTable + " WHERE id = 0")
                             .at(0)
                             .first;
    return mark < 0 ? mark : 0;  // a zap writes minus its time; deletions positive TIDs
  }

  backend::PackSession& s_;
  bool hp_;
  int64_t at_start_;
};

// History-preserving: deletes the revisions superseded at the pack time, OID range by OID
// range; returns how many.
uint64_t prune(backend::PackSession& s, Tid pack_tid, EmptiedCheck& emptied) {
  // The smallest OID that matches `where` (none: no more), in the second column, as text,
  // whose NULL says "none" where no integer could (an index lookup, not a count).
  const auto first_above = [&](const std::string& where) -> std::optional<int64_t> {
    const auto r = s.rows("SELECT 0, MIN(zoid) FROM object_state" + where);
    if (r.empty() || !r[0].second) return std::nullopt;
    return std::stoll(*r[0].second);
  };
  uint64_t n = 0;
  for (std::optional<int64_t> from = first_above(""); from;) {
    const int64_t to = *from > std::numeric_limits<int64_t>::max() - kPruneSpan
                           ? std::numeric_limits<int64_t>::max()
                           : *from + kPruneSpan - 1;
    s.begin(false);
    emptied.check();
    n += s.exec(s.delete_superseded_sql(pack_tid, *from, to));
    s.commit();
    if (to == std::numeric_limits<int64_t>::max()) break;
    from = first_above(" WHERE zoid > " + std::to_string(to));
  }
  return n;
}

// History-preserving: marks the transactions up to the pack time packed and removes those
// left without revisions, but for the snapshot's last (the newest when the pack began,
// whose TID the next commit's must follow) and the first (whose TID every relstore
// process's poll reads, deletion_mark.h: were it to go, all of them would drop their
// caches as after a zap). Returns how many went.
uint64_t clean_transactions(backend::PackSession& s, Tid pack_tid, Tid last) {
  const std::string p = std::to_string(pack_tid.sql());
  const std::string batch_size = std::to_string(kTransactionBatch);
  // Each loop goes on after the highest TID of its previous batch.
  for (int64_t after = 0;;) {
    const auto batch =
        ids(s, "SELECT tid, NULL FROM \"transaction\" WHERE tid > " + std::to_string(after) +
                   " AND tid <= " + p + " AND packed = FALSE ORDER BY tid LIMIT " + batch_size);
    if (batch.empty()) break;
    s.begin(false);
    s.exec("UPDATE \"transaction\" SET packed = TRUE WHERE tid IN (" + in_list(batch) + ")");
    s.commit();
    after = batch.back();
  }
  const int64_t first =
      s.rows("SELECT MIN(tid), NULL FROM \"transaction\" WHERE tid > 0").at(0).first;
  uint64_t removed = 0;
  for (int64_t after = first;;) {
    const auto empty =
        ids(s, "SELECT t.tid, NULL FROM \"transaction\" t WHERE t.tid > " + std::to_string(after) +
                   " AND t.tid <= " + p + " AND t.tid < " + std::to_string(last.sql()) +
                   " AND NOT EXISTS (SELECT 1 FROM object_state o WHERE o.tid = t.tid) "
                   "ORDER BY t.tid LIMIT " +
                   batch_size);
    if (empty.empty()) break;
    s.begin(false);
    removed += chunked(empty, [&](const std::string& list) {
      // Revisions that named one as their predecessor now start the object's history.
      s.exec("UPDATE object_state SET prev_tid = 0 WHERE prev_tid IN (" + list + ")");
      for (const char* t : {"object_ref", "object_refs_added"}) {
        if (s.has_table(t))
          s.exec(std::string("DELETE FROM ") + t + " WHERE tid IN (" + list + ")");
      }
      return s.exec("DELETE FROM \"transaction\" WHERE tid IN (" + list + ")");
    });
    s.commit();
    after = empty.back();
  }
  return removed;
}

// --check-refs: refuses when an object the pack keeps references one that does not exist
// or that the pack removes (`doomed`), listing the first such references.
void check_references(const Marks& m, const std::vector<int64_t>& doomed) {
  constexpr uint64_t kListed = 20;
  const std::unordered_set<uint64_t> gone(doomed.begin(), doomed.end());
  const std::unordered_set<uint64_t> later(m.live.begin(), m.live.end());
  const auto kept = [&](uint64_t oid) {
    return (m.existing.count(oid) || later.count(oid)) && !gone.count(oid);
  };
  std::vector<uint64_t> from;
  for (const auto& [oid, tid] : m.existing) from.push_back(oid);
  from.insert(from.end(), m.live.begin(), m.live.end());
  std::sort(from.begin(), from.end());
  from.erase(std::unique(from.begin(), from.end()), from.end());
  uint64_t bad = 0;
  std::string listed;
  for (const uint64_t oid : from) {
    const auto* refs = kept(oid) ? m.graph.references(oid) : nullptr;
    if (!refs) continue;
    for (const uint64_t to : *refs) {
      if (kept(to)) continue;
      if (++bad <= kListed) listed += " " + Oid(oid).hex() + " -> " + Oid(to).hex();
    }
  }
  if (bad == 0) return;
  throw StorageError("pack: " + std::to_string(bad) +
                     " references from objects the pack keeps to objects that do not exist or "
                     "that it would remove (deleted ones):" +
                     listed + (bad > kListed ? " …" : "") +
                     " (--check-refs; loading them raises POSKeyError already)");
}

// --prepack-only: what the pack would remove, counted without removing anything. The
// revisions a history-preserving pack keeps at or before the pack time are each object's
// newest one then, unless the object goes; transactions left without any go, but for the
// first and the newest (clean_transactions).
void count_removals(backend::PackSession& s, const std::vector<int64_t>& doomed, bool hp, Tid last,
                    PackResult& result) {
  result.prepack_only = true;
  result.objects_removed = doomed.size();
  if (!hp) return;
  const std::string p = std::to_string(result.pack_tid.sql());
  std::unordered_set<int64_t> gone(doomed.begin(), doomed.end());
  // (newest tid at or before the pack time, zoid as text) per object.
  const auto newest =
      s.rows("SELECT MAX(tid), zoid FROM object_state WHERE tid <= " + p + " GROUP BY zoid");
  std::unordered_set<int64_t> kept_tids;
  for (const auto& [tid, zoid] : newest) {
    if (!gone.count(std::stoll(zoid.value_or("0")))) kept_tids.insert(tid);
  }
  const int64_t revisions =
      s.rows("SELECT COUNT(*), NULL FROM object_state WHERE tid <= " + p).at(0).first;
  result.revisions_removed = static_cast<uint64_t>(revisions) - newest.size();
  const int64_t first =
      s.rows("SELECT MIN(tid), NULL FROM \"transaction\" WHERE tid > 0").at(0).first;
  for (const int64_t tid :
       ids(s, "SELECT tid, NULL FROM \"transaction\" WHERE tid > " + std::to_string(first) +
                  " AND tid <= " + p + " AND tid < " + std::to_string(last.sql()))) {
    if (!kept_tids.count(tid)) ++result.transactions_removed;
  }
}

// The blob directory of the storage that packed (a cache of blob_chunk) loses the files of
// what the pack removed: those of removed objects, and of revisions older than the one
// current at the pack time (history-preserving: pruned; history-free: long superseded).
// Other processes' directories keep theirs until their own limits or packs; a stale file
// is never served for a revision that exists, only for one that went. Never throws.
void drop_packed_blobs(const BlobDir& dir, const Marks& m,
                       const std::unordered_set<uint64_t>& removed) noexcept {
  try {
    for (const BlobFile& f : dir.list()) {
      const auto it = m.existing.find(f.oid.value());
      const bool superseded = it != m.existing.end() && f.tid < it->second;
      if (!removed.count(f.oid.value()) && !superseded) continue;
      std::error_code ec;
      std::filesystem::remove(f.path, ec);
    }
  } catch (const std::exception&) {
    // Only a cache: what stays is merely stale.
  }
}

// Storage::pack's work, counting what it removed in `result` as it goes; the files of what
// it removed leave `blob_cache` (when the storage has one).
void run_pack(backend::Adapter& a, backend::PackSession& session, const PackOptions& options,
              const BlobDir* blob_cache, PackResult& result) {
  const bool hp = a.keep_history();
  if (options.gc && !session.excludes_voted_commits()) {
    throw StorageError(
        "pack: this database has no JSON mirror lock (migration json_mirror), which relstore's "
        "commits hold from their vote to their finish, so a commit between the two could link "
        "in an object the garbage collection removes; run `relstore migrate up` first, or pack "
        "without garbage collection (--no-gc)");
  }
  if (!hp && !session.has_table(backend::kDeletionMarkTable)) {
    // Without it, removing the newest row would take the last TID back, and a zap while
    // the pack runs could not be told.
    throw StorageError("pack: this history-free database has no deletion record (migration " +
                       std::string(backend::kDeletionMarkTable) +
                       "); run `relstore migrate up` first");
  }
  EmptiedCheck emptied(session, hp);
  Marks m;
  // TID 0 is the creation sentinel: a pack time before the first transaction is TID 1.
  Tid seen = mark(a, std::max(options.pack_tid, Tid(1)), options.gc,
                  options.gc || options.check_refs, m, result.pack_tid);
  if (seen.is_zero()) return;  // nothing was ever committed
  const Tid last = seen;
  if (options.after_mark) options.after_mark();
  const std::string p = std::to_string(result.pack_tid.sql());

  std::unordered_set<uint64_t> live;
  std::vector<int64_t> doomed;
  if (options.gc) {
    std::vector<uint64_t> roots = m.live;
    roots.push_back(0);
    m.graph.reach(roots, live);
    for (const auto& [oid, tid] : m.existing) {
      if (!live.count(oid)) doomed.push_back(static_cast<int64_t>(oid));
    }
  }
  std::unordered_set<int64_t> deleted;
  if (hp) {
    // Deleted at the pack time: nothing of them is needed (unless written since, which
    // the locking below finds).
    for (const int64_t oid : ids(session,
                                 "SELECT c.zoid, NULL FROM current_object c JOIN object_state s ON "
                                 "s.zoid = c.zoid AND s.tid = c.tid WHERE c.tid <= " +
                                     p + " AND s.state IS NULL")) {
      deleted.insert(oid);
      doomed.push_back(oid);
    }
  }
  std::sort(doomed.begin(), doomed.end());
  doomed.erase(std::unique(doomed.begin(), doomed.end()), doomed.end());
  if (options.check_refs) check_references(m, doomed);
  if (options.prepack_only) {
    count_removals(session, doomed, hp, last, result);
    return;
  }
  // Pruning touches no current revision, so it does not change what is doomed.
  if (hp) result.revisions_removed = prune(session, result.pack_tid, emptied);

  // What goes with an object. History-preserving object_ref rows stay (RelStorage's
  // pre-pack cache, keyed by TID first: finding them by zoid would scan the table under
  // the commit lock; rows of removed objects only keep garbage alive for RelStorage).
  std::vector<std::string> tables;
  for (const char* t : {"object_json", "object_json_error"}) {
    if (session.has_table(t)) tables.emplace_back(t);
  }
  if (!hp) {
    for (const char* t : {"object_ref", "object_refs_added"}) {
      if (session.has_table(t)) tables.emplace_back(t);
    }
  }
  if (hp) tables.emplace_back("current_object");  // before object_state: it references it
  const bool mark_deletions = !hp;  // history-free databases have the record (checked above)
  const char* locked_table = hp ? "current_object" : "object_state";
  std::unordered_set<uint64_t> removed_oids;
  for (size_t i = 0; i < doomed.size(); i += kRemoveBatch) {
    session.begin(true);
    emptied.check();
    // What was committed since the last look is live, with what it references.
    const auto changed = session.rows("SELECT zoid, state FROM object_state WHERE tid > " +
                                      std::to_string(seen.sql()));
    if (!changed.empty()) {
      std::vector<uint64_t> roots;
      for (const auto& [oid, state] : changed) {
        roots.push_back(static_cast<uint64_t>(oid));
        if (options.gc) add_refs(m, Oid::from_sql(oid), state);
      }
      m.graph.reach(roots, live);
      seen = Tid::from_sql(session.rows("SELECT MAX(tid), NULL FROM object_state").at(0).first);
    }
    std::vector<int64_t> batch;
    for (size_t j = i; j < std::min(doomed.size(), i + kRemoveBatch); ++j) {
      if (deleted.count(doomed[j]) || !live.count(static_cast<uint64_t>(doomed[j]))) {
        batch.push_back(doomed[j]);
      }
    }
    // Locked in OID order as votes lock; a row another transaction holds is kept, as is
    // an object written since the pack time.
    std::vector<int64_t> removed;
    chunked(batch, [&](const std::string& list) {
      const auto got =
          ids(session, std::string("SELECT zoid, NULL FROM ") + locked_table + " WHERE zoid IN (" +
                           list + ") AND tid <= " + p + " ORDER BY zoid " + session.skip_locked());
      removed.insert(removed.end(), got.begin(), got.end());
      return 0;
    });
    Tid newest;
    for (const int64_t oid : removed) {
      const auto it = m.existing.find(static_cast<uint64_t>(oid));
      if (it != m.existing.end()) newest = std::max(newest, it->second);
    }
    chunked(removed, [&](const std::string& list) {
      for (const auto& t : tables)
        session.exec("DELETE FROM " + t + " WHERE zoid IN (" + list + ")");
      // blob_chunk rows go with their object_state rows (ON DELETE CASCADE).
      return session.exec("DELETE FROM object_state WHERE zoid IN (" + list + ") AND tid <= " + p);
    });
    if (mark_deletions && !newest.is_zero() &&
        newest.sql() > session.rows("SELECT MAX(tid), NULL FROM object_state").at(0).first) {
      // The newest TID was one of the removed rows: the deletion record keeps it, so TIDs
      // and polls never go back (deletion_mark.h). Only then: every relstore process's
      // poll reads a moved record as "everything changed".
      const std::string t = std::to_string(newest.sql());
      session.exec(std::string("UPDATE ") + backend::kDeletionMarkTable +
                   " SET tid = CASE WHEN tid > " + t + " THEN tid ELSE " + t + " END WHERE id = 0");
      emptied.moved_by_pack();
    }
    session.commit();
    result.objects_removed += removed.size();
    for (const int64_t oid : removed) removed_oids.insert(static_cast<uint64_t>(oid));
    result.objects_locked += batch.size() - removed.size();
  }
  if (hp) result.transactions_removed = clean_transactions(session, result.pack_tid, last);
  if (blob_cache) drop_packed_blobs(*blob_cache, m, removed_oids);
}

// What a pack that stopped had done, for its error message.
std::string stopped_after(const PackResult& r) {
  if (r.revisions_removed + r.objects_removed + r.transactions_removed == 0) {
    return "nothing was removed";
  }
  return "the pack stopped part-way, after removing " + std::to_string(r.revisions_removed) +
         " old revisions, " + std::to_string(r.objects_removed) + " objects and " +
         std::to_string(r.transactions_removed) +
         " transactions: the database is consistent as it is, and packing again finishes the job";
}

}  // namespace

PackResult DbStorage::pack(const PackOptions& options) {
  check_open();
  if (options_.read_only) throw ReadOnlyError();
  auto session = adapter_->open_pack();
  PackResult result;
  try {
    run_pack(*adapter_, *session, options, blob_dir_ ? &*blob_dir_ : nullptr, result);
  } catch (const std::exception& e) {
    cache_.clear();
    throw StorageError(std::string(e.what()) + "; " + stopped_after(result));
  }
  cache_.clear();
  return result;
}

}  // namespace relstore
