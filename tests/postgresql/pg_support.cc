#include "postgresql/pg_support.h"

#include <cctype>
#include <cstdlib>
#include <sstream>

#include "adapters/postgresql/adapter.h"

namespace relstore::pgtest {
namespace {

std::unique_ptr<postgresql::Conn> connect_to(const std::string& uri) {
  const StorageUri parsed = StorageUri::parse(uri);
  return std::make_unique<postgresql::Conn>(
      postgresql::location_of(parsed, parsed.options()).connect, nullptr);
}

}  // namespace

std::optional<std::string> server_uri() {
  const char* env = std::getenv("RELSTORE_TEST_POSTGRESQL_URI");
  if (!env || !*env) return std::nullopt;
  return std::string(env);
}

bool server_required() {
  const char* env = std::getenv("RELSTORE_TEST_REQUIRE");
  if (!env) return false;
  std::stringstream ss(env);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item == "postgresql" || item == "all") return true;
  }
  return false;
}

std::string uri_with(const std::string& uri, const std::string& database,
                     const std::string& query) {
  const size_t authority = uri.find("://") + 3;
  const size_t query_start = uri.find('?');
  const size_t slash = uri.find('/', authority);
  std::string out = uri.substr(0, std::min(slash, query_start));
  out += "/" + database;
  if (!query.empty()) out += "?" + query;
  return out;
}

void exec_on_server(const std::string& sql) {
  connect_to(*server_uri())->simple(sql, postgresql::Context::other);
}

TestDatabase::TestDatabase(const std::string& name)
    : name_(StorageUri::parse(*server_uri()).database + "_t_" + name) {
  for (char& c : name_) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  exec_on_server("DROP DATABASE IF EXISTS \"" + name_ + "\" WITH (FORCE)");
  exec_on_server("CREATE DATABASE \"" + name_ + "\"");
}

TestDatabase::~TestDatabase() {
  conn_.reset();
  try {
    exec_on_server("DROP DATABASE IF EXISTS \"" + name_ + "\" WITH (FORCE)");
  } catch (...) {
    // Left for the next run, which drops it first.
  }
}

std::string TestDatabase::uri(const std::string& query) const {
  return uri_with(*server_uri(), name_, query);
}

std::unique_ptr<postgresql::Conn> TestDatabase::connect() const { return connect_to(uri()); }

void TestDatabase::exec(const std::string& sql) {
  if (!conn_ || !conn_->ok()) conn_ = connect();
  conn_->simple(sql, postgresql::Context::other);
}

std::string TestDatabase::scalar(const std::string& sql) {
  if (!conn_ || !conn_->ok()) conn_ = connect();
  const auto results = conn_->simple(sql, postgresql::Context::other);
  if (results.empty() || results.back().rows() == 0 || results.back().is_null(0, 0)) return "";
  return results.back().bytes(0, 0);
}

std::string mode_name(const ::testing::TestParamInfo<bool>& info) {
  return info.param ? "hp" : "hf";
}

Serials new_objects(uint64_t n) {
  Serials out;
  for (uint64_t oid = 1; oid <= n; ++oid) out[oid] = Tid(0);
  return out;
}

Tid store_all(StorageInstance& inst, Serials& serials, const std::vector<uint64_t>& oids,
              const std::string& data) {
  TransactionMetaData txn{"user", "test", ""};
  inst.tpc_begin(txn);
  for (uint64_t oid : oids) inst.store(Oid(oid), serials[oid], data, txn);
  inst.tpc_vote(txn);
  const Tid tid = inst.tpc_finish(txn);
  for (uint64_t oid : oids) serials[oid] = tid;
  return tid;
}

Tid update_all(StorageInstance& inst, Serials& serials, const std::string& data) {
  std::vector<uint64_t> oids;
  for (const auto& entry : serials) oids.push_back(entry.first);
  return store_all(inst, serials, oids, data);
}

}  // namespace relstore::pgtest
