// The per-backend test context of the conformance suite (style.md: one suite, compiled
// once per backend, run through a small context that declares its capabilities).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "relstore/storage.h"

namespace relstore::conformance {

struct Backend {
  std::string name;   // "sqlite", "postgresql", "mysql", "file"
  bool keep_history;  // HP or HF
  std::string label() const { return name + (keep_history ? "_hp" : "_hf"); }
};

// Implemented once per backend (context_<backend>.cc).
class Context {
 public:
  virtual ~Context() = default;
  // Why this backend cannot run here (e.g. no server URI given), or none.
  virtual std::optional<std::string> unavailable() const = 0;
  // The URI of an empty database in the backend's mode, made fresh for the current test.
  virtual std::string fresh_uri() = 0;
  // Whether TIDs come from a clock the test can set (StorageOptions::clock).
  virtual bool client_clock() const = 0;
  // Whether several processes can write the database at once. A FileStorage cannot:
  // its lock file admits one writing process (ZODB needs ZEO for more).
  virtual bool multi_process_writers() const { return true; }
};

// The backends × modes this executable tests.
std::vector<Backend> backends();
std::unique_ptr<Context> make_context(const Backend& backend);

// True when RELSTORE_TEST_REQUIRE (comma-separated) names `backend`: then an unavailable
// backend fails its tests instead of skipping them.
bool required(const std::string& backend);

}  // namespace relstore::conformance
