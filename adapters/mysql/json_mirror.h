// The JSON mirror on MySQL/MariaDB (migration 0002, sql/mysql/relstore_json_mirror_*.sql):
// the rows a finish or a follow batch uploads into temp_json, and the follow, rebuild and
// status calls over connections of their own.
#pragma once

#include <memory>
#include <mutex>
#include <optional>

#include "adapters/mysql/adapter.h"
#include "adapters/mysql/upload.h"

namespace relstore::mysql::json_mirror {

inline constexpr std::string_view kInsertTemp =
    "INSERT INTO temp_json (zoid, tid, class_name, ghost_pickle, state, refs, message) VALUES ";

// The entries of `batch` as temp_json rows: decoded rows, undecodable states (message) and
// removals. The batch must outlive the result.
UploadRows temp_rows(const mirror::Batch& batch);

// The batch to upload: `batch`, or a copy of it in `fitted` in which each row longer than
// one packet (max_allowed_packet) became an error entry. The server cannot take such a row
// at all; as a row it refuses, it must neither fail a commit nor stop every follower at
// that batch.
const mirror::Batch& fit_to_packet(const mirror::Batch& batch, const Settings& settings,
                                   std::optional<mirror::Batch>& fitted);

// The mirror calls of backend::Adapter for one database. Thread-safe (one call at a time).
class Mirror {
 public:
  Mirror(const Settings& settings, backend::Adapter& counter)
      : settings_(settings), counter_(counter) {}

  backend::MirrorState state();
  void set_mode(MirrorMode mode);
  backend::MirrorChanges changes(Tid since, size_t limit);
  std::vector<Oid> orphans(size_t limit);
  void apply(const mirror::Batch& batch, std::optional<mirror::Advance> advance);
  void clear();
  void settle();

 private:
  // A store connection (autocommit off, temp tables) for writes and a REPEATABLE READ one
  // for reads; each checks once that the mirror's tables exist.
  Connection& writer();
  Connection& reader();
  std::unique_ptr<Connection> open(Role role);
  // Runs `sql` (`statements` statements ending with COMMIT) on the writer, rolling back on
  // any error.
  void write(const std::string& sql, int statements);

  const Settings& settings_;
  backend::Adapter& counter_;
  std::mutex mu_;
  std::unique_ptr<Connection> writer_;
  std::unique_ptr<Connection> reader_;
};

// Whether the database has the mirror's tables (migration 0002).
bool has_tables(Connection& conn);

}  // namespace relstore::mysql::json_mirror
