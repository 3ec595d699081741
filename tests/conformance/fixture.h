// The fixture every conformance test runs in: a fresh database of one backend and mode.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "conformance/context.h"
#include "relstore/clock.h"
#include "relstore/errors.h"
#include "relstore/storage.h"

namespace relstore::conformance {

class StorageTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override;
  void TearDown() override;

  bool hp() const { return GetParam().keep_history; }
  // Opens another Storage on this test's database (as another process would).
  std::unique_ptr<Storage> reopen(const std::string& extra_query = "");
  // Another Storage on this test's database whose TIDs follow `clock` (backends whose
  // client chooses TIDs; see Context::client_clock).
  std::unique_ptr<Storage> open_with_clock(std::shared_ptr<Clock> clock);
  // Appends options to the test database's URI.
  std::string uri(const std::string& extra_query = "") const;

  // Commits `data` for each oid with the given serials (none: new object); returns the TID.
  Tid commit(StorageInstance& inst, const std::map<uint64_t, std::string>& data,
             const std::map<uint64_t, Tid>& serials = {}, const std::string& user = "user",
             const std::string& description = "description", const std::string& ext = "");
  // Creates object `oid` with `data` in its own transaction and returns the TID.
  Tid create(uint64_t oid, const std::string& data);
  // Deletes object `oid` (delete_object, current serial `serial`) in its own transaction
  // through inst_ and returns the TID.
  Tid remove(uint64_t oid, Tid serial);

  std::unique_ptr<Context> context_;
  std::string uri_;
  std::unique_ptr<Storage> storage_;
  std::unique_ptr<StorageInstance> inst_;
};

// The backends of the suite that are databases (of one history mode, when given), and
// the Data.fs ones: for behaviours only one kind has.
std::vector<Backend> database_backends(std::optional<bool> keep_history = std::nullopt);
std::vector<Backend> file_backends();

// Names like "sqlite_hp" so ctest names end in /sqlite_hp.
std::string backend_name(const ::testing::TestParamInfo<Backend>& info);

#define RELSTORE_HP_ONLY(line, why) \
  if (!hp()) GTEST_SKIP() << "history-preserving only (conformance.md line " << line << "): " << why

#define RELSTORE_CONFORMANCE_SUITE(Suite) \
  INSTANTIATE_TEST_SUITE_P(Conformance, Suite, ::testing::ValuesIn(backends()), backend_name)

}  // namespace relstore::conformance
