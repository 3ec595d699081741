// The JSON mirror: object_json, a queryable copy of every object's current state
// (json-mirror.md, design.md §7). Library functions behind `relstore json-mirror`.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "relstore/types.h"

namespace relstore {

// off: not maintained. in-commit: every commit writes its rows in the same database
// transaction. follow: a `relstore json-mirror follow` process catches up behind commits.
enum class MirrorMode { off, in_commit, follow };
const char* mirror_mode_name(MirrorMode mode);
MirrorMode parse_mirror_mode(const std::string& text);  // ConfigError for others

struct MirrorStatus {
  MirrorMode mode = MirrorMode::off;
  uint64_t rows = 0;         // rows in object_json
  uint64_t undecodable = 0;  // current states that could not be decoded (object_json_error)
  Tid mirrored_tid;          // everything committed up to here is mirrored
  Tid database_tid;          // the database's last TID
  // Time between the two TIDs; none while nothing has been mirrored yet in a database
  // that has data (no TID to measure from: everything is behind).
  std::optional<double> lag_seconds;
  uint64_t pending = 0;  // current states newer than mirrored_tid
  // Rows (and error entries) of objects that no longer exist: deleted by another writer
  // (RelStorage's deleteObject, a pack's garbage collection) in a way no TID shows. The next
  // follow sweep removes them. Counted up to kStatusOrphanLimit.
  uint64_t orphaned = 0;
};
inline constexpr uint64_t kStatusOrphanLimit = 100000;

// Commit time from the mirror's progress to the database's newest transaction: 0 when
// caught up, none when nothing has been mirrored in a database that has data.
std::optional<double> mirror_lag_seconds(Tid database_tid, Tid mirrored_tid);

MirrorStatus mirror_status(const std::string& uri);
std::string format_mirror_status(const MirrorStatus& status, bool json);

struct MirrorProgress {
  uint64_t decoded = 0;
  uint64_t removed = 0;
  uint64_t undecodable = 0;
  Tid mirrored_tid;
  Tid database_tid;
};
using MirrorProgressFn = std::function<void(const MirrorProgress&)>;

// Sets the mode. Enabling in-commit mode catches the mirror up (rebuilding what was never
// mirrored) so that it is complete when the command returns.
MirrorProgress mirror_enable(const std::string& uri, MirrorMode mode,
                             const MirrorProgressFn& progress = {});
void mirror_disable(const std::string& uri);
// Empties the mirror and builds it again from the current state of every object.
MirrorProgress mirror_rebuild(const std::string& uri, const MirrorProgressFn& progress = {});

struct FollowOptions {
  double poll_seconds = 1.0;                // how often to look for commits where nothing wakes us
  bool once = false;                        // catch up, then return
  size_t batch = 5000;                      // current states per write transaction
  const std::atomic<bool>* stop = nullptr;  // set to end the loop
  MirrorProgressFn progress;
  // Without `once`, a lost connection (server restart, failover) does not end the
  // follower: it says so here, waits `poll_seconds` (doubling up to a minute) and
  // reconnects. Progress is in the database, so nothing is lost or done twice.
  std::function<void(const std::string&)> on_retry;
};
// Catches up from the recorded progress (object_state.tid > last), records progress after
// each batch, removes rows of deleted objects, and waits for more unless `once`.
MirrorProgress mirror_follow(const std::string& uri, const FollowOptions& options);

}  // namespace relstore
