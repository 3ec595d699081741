// Storage URIs: sqlite:///dir, postgresql://…, mysql://…, file:///…Data.fs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace relstore {

class Clock;

enum class Scheme { sqlite, postgresql, mysql, file };

const char* scheme_name(Scheme s);

enum class HistoryMode { detect, free, preserving };

// Storage options, given as URI query parameters (`?history=free&read_only=1`).
struct StorageOptions {
  // detect: use the existing database's mode; a new database is history-preserving.
  HistoryMode history = HistoryMode::detect;
  bool read_only = false;
  // Size of the shared (oid, tid) -> state cache of one Storage.
  size_t cache_mb = 64;
  // Seconds to wait for the commit lock before UnableToAcquireCommitLockError.
  double commit_lock_timeout = 30.0;
  // Create the schema when the database is empty. Tools that only inspect (info) turn it off.
  bool create = true;
  // The clock TIDs come from where the client chooses them (SQLite); null = system clock.
  std::shared_ptr<Clock> clock;
  // Where blob files are kept: for a database, a cache of the contents its blob_chunk
  // table holds (RelStorage's blob-dir with shared-blob-dir false). Empty: no blobs.
  std::string blob_dir;
  // RelStorage's blob-cache-size: the most bytes blob_dir keeps (none: no limit). Past it,
  // the least recently used files go (storage/blob_cache_limit.h).
  std::optional<uint64_t> blob_cache_size;
  // RelStorage's blob-cache-size-check: the percentage of blob_cache_size written into the
  // cache between two checks of its size.
  double blob_cache_size_check = 10;
  // Parameters relstore does not know itself; the adapter decides (libpq options, pragmas).
  std::map<std::string, std::string> driver;
};

struct StorageUri {
  Scheme scheme = Scheme::sqlite;
  std::string user;
  std::string password;
  std::string host;
  std::optional<int> port;
  // Database name (postgresql, mysql) or filesystem path (sqlite directory, Data.fs file).
  std::string database;
  std::map<std::string, std::string> params;

  // Throws ConfigError naming what is wrong; the message never contains the password.
  static StorageUri parse(std::string_view text);
  // The URI with the password (and any password parameter) replaced by "***".
  std::string redacted() const;
  // The URI as text that parse() reads back, password included: for passing on, never
  // for printing.
  std::string text() const;
  // Parses the query parameters into options. Throws ConfigError for a bad value.
  StorageOptions options() const;
};

// Replaces every password in `text` that looks like a URI credential or a key=value
// password with "***". For messages that may quote a connection string.
std::string redact_secrets(std::string_view text);

}  // namespace relstore
