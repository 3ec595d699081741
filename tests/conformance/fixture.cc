#include "conformance/fixture.h"

#include <cstdlib>
#include <sstream>

namespace relstore::conformance {

bool required(const std::string& backend) {
  const char* env = std::getenv("RELSTORE_TEST_REQUIRE");
  if (!env) return false;
  std::stringstream ss(env);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item == backend || item == "all") return true;
  }
  return false;
}

std::vector<Backend> database_backends(std::optional<bool> keep_history) {
  std::vector<Backend> out;
  for (const Backend& b : backends()) {
    if (b.name != "file" && (!keep_history || b.keep_history == *keep_history)) out.push_back(b);
  }
  return out;
}

std::vector<Backend> file_backends() {
  std::vector<Backend> out;
  for (const Backend& b : backends()) {
    if (b.name == "file") out.push_back(b);
  }
  return out;
}

std::string backend_name(const ::testing::TestParamInfo<Backend>& info) {
  return info.param.label();
}

void StorageTest::SetUp() {
  context_ = make_context(GetParam());
  if (auto why = context_->unavailable()) {
    if (required(GetParam().name)) {
      FAIL() << GetParam().name << " is required (RELSTORE_TEST_REQUIRE) but unavailable: " << *why;
    }
    GTEST_SKIP() << GetParam().name << " unavailable: " << *why;
  }
  uri_ = context_->fresh_uri();
  storage_ = open_storage(uri_);
  ASSERT_EQ(storage_->keep_history(), hp());
  inst_ = storage_->new_instance();
}

void StorageTest::TearDown() {
  inst_.reset();
  if (storage_) storage_->close();
  storage_.reset();
}

std::string StorageTest::uri(const std::string& extra_query) const {
  if (extra_query.empty()) return uri_;
  return uri_ + (uri_.find('?') == std::string::npos ? "?" : "&") + extra_query;
}

std::unique_ptr<Storage> StorageTest::reopen(const std::string& extra_query) {
  return open_storage(uri(extra_query));
}

Tid StorageTest::commit(StorageInstance& inst, const std::map<uint64_t, std::string>& data,
                        const std::map<uint64_t, Tid>& serials, const std::string& user,
                        const std::string& description, const std::string& ext) {
  TransactionMetaData txn{user, description, ext};
  inst.tpc_begin(txn);
  try {
    for (const auto& [oid, bytes] : data) {
      auto s = serials.find(oid);
      inst.store(Oid(oid), s == serials.end() ? std::nullopt : std::optional(s->second), bytes,
                 txn);
    }
    inst.tpc_vote(txn);
    return inst.tpc_finish(txn);
  } catch (...) {
    inst.tpc_abort(txn);
    throw;
  }
}

Tid StorageTest::create(uint64_t oid, const std::string& data) {
  return commit(*inst_, {{oid, data}});
}

std::unique_ptr<Storage> StorageTest::open_with_clock(std::shared_ptr<Clock> clock) {
  const StorageUri parsed = StorageUri::parse(uri_);
  StorageOptions options = parsed.options();
  options.clock = std::move(clock);
  return open_storage(parsed, options);
}

Tid StorageTest::remove(uint64_t oid, Tid serial) {
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  inst_->delete_object(Oid(oid), serial, txn);
  inst_->tpc_vote(txn);
  return inst_->tpc_finish(txn);
}

}  // namespace relstore::conformance
