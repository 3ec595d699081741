// relstore json-mirror status|enable|disable|rebuild|follow, over a dialect's mirror calls.
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "backend/registry.h"
#include "relstore/errors.h"
#include "relstore/json_mirror.h"
#include "relstore/timestamp.h"

namespace relstore {
namespace {

using SteadyClock = std::chrono::steady_clock;

std::unique_ptr<backend::Adapter> open_db(const std::string& uri, bool write) {
  const StorageUri parsed = StorageUri::parse(uri);
  if (parsed.scheme == Scheme::file) {
    throw ConfigError("the JSON mirror lives in a database; a file: URI has none");
  }
  StorageOptions options = parsed.options();
  options.create = false;
  if (!write) options.read_only = true;
  return backend::open_adapter(parsed, options);
}

// The states a batch decodes and writes, in bytes, beside its count: in in-commit mode a
// batch is written under the commit lock, which every commit then waits for, and a count
// alone let a batch of large objects hold it for seconds.
constexpr size_t kBatchStateBytes = 16 << 20;

// Cuts `changes` after the whole transactions whose states fit in kBatchStateBytes (at least
// one transaction), marking that more follow.
void keep_within_batch_bytes(backend::MirrorChanges& changes) {
  auto& states = changes.states;
  size_t bytes = 0;
  size_t keep = 0;  // the end of the last whole transaction within the limit
  size_t i = 0;
  for (; i < states.size(); ++i) {
    if (i > 0 && states[i].second.tid != states[i - 1].second.tid) {
      if (bytes > kBatchStateBytes) break;
      keep = i;
    }
    if (states[i].second.state) bytes += states[i].second.state->size();
  }
  if (bytes <= kBatchStateBytes) return;
  const size_t cut = keep > 0 ? keep : i;  // a first transaction over the limit goes whole
  if (cut >= states.size()) return;
  states.resize(cut);
  changes.more = true;
}

// Follows the database from the recorded progress until it has nothing newer, one write
// transaction per batch. With `sweep`, also removes rows of objects that are gone without
// a trace a TID could show (history-free deletions, pack).
MirrorProgress catch_up(backend::Adapter& db, size_t batch, bool sweep,
                        const MirrorProgressFn& progress, const std::atomic<bool>* stop = nullptr) {
  RecordDecoder decoder;
  const DecodeOptions options = db.mirror_decode_options();
  MirrorProgress p;
  mirror::Batch work;
  for (;;) {
    const Tid last = db.mirror_state().last_tid;
    backend::MirrorChanges changes = db.mirror_changes(last, batch);
    if (!last.is_zero() && changes.database_tid.is_zero()) {
      // The mirror has reached a TID and the database holds no object: it was emptied by
      // software that leaves relstore's tables alone (RelStorage's zap_all; on PostgreSQL
      // a trigger resets the mirror with its TRUNCATE). Data loaded next may carry TIDs
      // below the progress, and would never be mirrored: start the mirror over. (Seen only
      // while the database is empty; a reload already under way needs `rebuild`.)
      db.mirror_clear();
      sweep = false;  // the clear removed every row
      continue;
    }
    keep_within_batch_bytes(changes);
    work.clear();
    for (const auto& [oid, row] : changes.states) {
      mirror::add_state(oid, row.tid, row.state, decoder, options, work);
    }
    const Tid to = changes.more ? changes.states.back().second.tid : changes.database_tid;
    if (!work.empty() || to > last) db.mirror_apply(work, mirror::Advance{last, to});
    p.decoded += work.rows.size();
    p.undecodable += work.errors.size();
    p.removed += work.deletes.size();
    p.mirrored_tid = std::max(last, to);
    p.database_tid = changes.database_tid;
    if (progress) progress(p);
    if (!changes.more) break;
    if (stop && stop->load()) return p;  // progress is recorded: a later run continues here
  }
  while (sweep) {
    const std::vector<Oid> gone = db.mirror_orphans(batch);
    if (gone.empty()) break;
    work.clear();
    for (Oid oid : gone) work.deletes.emplace_back(oid, Tid(0));
    db.mirror_apply(work, std::nullopt);
    p.removed += gone.size();
    if (progress) progress(p);
  }
  return p;
}

// In-commit, a commit landing between a catch-up's last read and its write mirrors
// itself, but the in-commit rule then keeps the progress below it for good; settling
// (under the commit lock, once everything is mirrored) moves it to the newest TID.
void settle_in_commit(backend::Adapter& db) {
  if (db.mirror_state().mode == MirrorMode::in_commit) db.mirror_settle();
}

}  // namespace

const char* mirror_mode_name(MirrorMode mode) {
  switch (mode) {
    case MirrorMode::off:
      return "off";
    case MirrorMode::in_commit:
      return "in-commit";
    case MirrorMode::follow:
      return "follow";
  }
  return "?";
}

MirrorMode parse_mirror_mode(const std::string& text) {
  if (text == "off") return MirrorMode::off;
  if (text == "in-commit" || text == "in_commit") return MirrorMode::in_commit;
  if (text == "follow") return MirrorMode::follow;
  throw ConfigError("unknown JSON mirror mode '" + text + "': expected in-commit, follow or off");
}

std::optional<double> mirror_lag_seconds(Tid database_tid, Tid mirrored_tid) {
  if (database_tid <= mirrored_tid) return 0.0;
  if (mirrored_tid.is_zero()) return std::nullopt;
  return TimeStamp(database_tid).unix_time() - TimeStamp(mirrored_tid).unix_time();
}

MirrorStatus mirror_status(const std::string& uri) {
  auto db = open_db(uri, false);
  const backend::MirrorState st = db->mirror_state();
  MirrorStatus out;
  out.mode = st.mode;
  out.rows = st.rows;
  out.undecodable = st.errors;
  out.mirrored_tid = st.last_tid;
  out.database_tid = st.database_tid;
  out.pending = st.pending;
  // Deletions a TID does not show would otherwise leave a status that looks complete.
  out.orphaned = db->mirror_orphans(kStatusOrphanLimit).size();
  out.lag_seconds = mirror_lag_seconds(st.database_tid, st.last_tid);
  return out;
}

std::string format_mirror_status(const MirrorStatus& s, bool json) {
  auto when = [](Tid t) {
    return t.is_zero() ? std::string("never") : TimeStamp(t).str() + " UTC";
  };
  if (json) {
    return nlohmann::json{{"mode", mirror_mode_name(s.mode)},
                          {"rows", s.rows},
                          {"undecodable", s.undecodable},
                          {"mirrored_tid", s.mirrored_tid.hex()},
                          {"database_tid", s.database_tid.hex()},
                          {"lag_seconds", s.lag_seconds ? nlohmann::json(*s.lag_seconds)
                                                        : nlohmann::json(nullptr)},
                          {"pending", s.pending},
                          {"orphaned", s.orphaned}}
               .dump(2) +
           "\n";
  }
  char lag[64];
  if (s.lag_seconds) {
    std::snprintf(lag, sizeof lag, "%.3f s", *s.lag_seconds);
  } else {
    std::snprintf(lag, sizeof lag, "all of it (nothing mirrored yet)");
  }
  char buf[640];
  std::snprintf(buf, sizeof buf,
                "mode          %s\nrows          %llu\nundecodable   %llu\n"
                "mirrored to   %s (%s)\ndatabase at   %s (%s)\nlag           %s, %llu "
                "objects pending\n",
                mirror_mode_name(s.mode), static_cast<unsigned long long>(s.rows),
                static_cast<unsigned long long>(s.undecodable), s.mirrored_tid.hex().c_str(),
                when(s.mirrored_tid).c_str(), s.database_tid.hex().c_str(),
                when(s.database_tid).c_str(), lag, static_cast<unsigned long long>(s.pending));
  std::string out = buf;
  if (s.orphaned > 0) {
    out += "orphaned      " + std::to_string(s.orphaned) +
           (s.orphaned >= kStatusOrphanLimit ? " or more" : "") +
           " rows of deleted objects (relstore json-mirror follow --once removes them)\n";
  }
  return out;
}

MirrorProgress mirror_enable(const std::string& uri, MirrorMode mode,
                             const MirrorProgressFn& progress) {
  auto db = open_db(uri, true);
  db->set_mirror_mode(mode);
  if (mode != MirrorMode::in_commit) return {};
  // Commits from here on write their own rows; bring everything before up to date.
  const MirrorProgress p = catch_up(*db, 5000, true, progress);
  settle_in_commit(*db);
  return p;
}

void mirror_disable(const std::string& uri) {
  open_db(uri, true)->set_mirror_mode(MirrorMode::off);
}

MirrorProgress mirror_rebuild(const std::string& uri, const MirrorProgressFn& progress) {
  auto db = open_db(uri, true);
  db->mirror_clear();
  const MirrorProgress p = catch_up(*db, 5000, true, progress);
  settle_in_commit(*db);
  return p;
}

MirrorProgress mirror_follow(const std::string& uri, const FollowOptions& o) {
  auto db = open_db(uri, true);
  MirrorProgress total;
  // The orphan sweep reads the whole mirror, so it runs at start and then once a minute.
  auto last_sweep = SteadyClock::time_point{};
  double backoff = o.poll_seconds;
  for (;;) {
    try {
      if (!db) db = open_db(uri, true);
      const bool sweep = o.once || SteadyClock::now() - last_sweep > std::chrono::seconds(60);
      const MirrorProgress p = catch_up(*db, o.batch, sweep, o.progress, o.stop);
      if (sweep) last_sweep = SteadyClock::now();
      total.decoded += p.decoded;
      total.removed += p.removed;
      total.undecodable += p.undecodable;
      total.mirrored_tid = p.mirrored_tid;
      total.database_tid = p.database_tid;
      if (o.once) settle_in_commit(*db);  // convert's catch-up after a bulk load
      if (o.once || (o.stop && o.stop->load())) return total;
      db->mirror_wait(o.poll_seconds);
      backoff = o.poll_seconds;
    } catch (const DisconnectedError& e) {
      // A batch cut short rolled back whole and left the recorded progress as it was.
      if (o.once || !e.retryable()) throw;
      db.reset();
      if (o.on_retry) {
        o.on_retry(std::string(e.what()) + "; reconnecting in " + std::to_string(backoff) + " s");
      }
      std::this_thread::sleep_for(std::chrono::duration<double>(backoff));
      backoff = std::min(backoff * 2, 60.0);
    }
    if (o.stop && o.stop->load()) return total;
  }
}

}  // namespace relstore
