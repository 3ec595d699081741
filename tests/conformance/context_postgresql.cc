// PostgreSQL: the server named by RELSTORE_TEST_POSTGRESQL_URI. Each mode has databases of
// its own, <db>_hf and <db>_hp (and <db>_hf_2, … when a test asks for a second fresh
// database), created on demand (the role needs CREATEDB) and emptied with zap_all before
// every test, which is much faster than creating a database per test.
#include <cstdlib>
#include <set>

#include "adapters/postgresql/adapter.h"
#include "conformance/context.h"
#include "relstore/errors.h"

namespace relstore::conformance {
namespace {

const char* base_uri() {
  const char* env = std::getenv("RELSTORE_TEST_POSTGRESQL_URI");
  return env && *env ? env : nullptr;
}

// `uri` with its database name replaced by `name` and `query` appended.
std::string with_database(const std::string& uri, const std::string& name,
                          const std::string& query) {
  const size_t authority = uri.find("://") + 3;
  const size_t query_start = uri.find('?');
  const size_t slash = uri.find('/', authority);
  std::string out = uri.substr(0, slash == std::string::npos ? query_start : slash);
  out += "/" + name + "?" + query;
  if (query_start != std::string::npos) out += "&" + uri.substr(query_start + 1);
  return out;
}

void ensure_database(const std::string& name) {
  static std::set<std::string> known;
  if (known.count(name)) return;
  const StorageUri base = StorageUri::parse(base_uri());
  postgresql::Conn admin(postgresql::location_of(base, base.options()).connect, nullptr);
  const auto exists = admin.simple("SELECT 1 FROM pg_database WHERE datname = '" + name + "'",
                                   postgresql::Context::other);
  if (exists.front().rows() == 0) {
    try {
      admin.simple("CREATE DATABASE \"" + name + "\"", postgresql::Context::other);
    } catch (const StorageError& e) {
      // Another test executable may have created it just now.
      if (std::string(e.what()).find("already exists") == std::string::npos) throw;
    }
  }
  known.insert(name);
}

class PostgresqlContext : public Context {
 public:
  explicit PostgresqlContext(bool keep_history) : keep_history_(keep_history) {}

  std::optional<std::string> unavailable() const override {
    if (!base_uri()) return "RELSTORE_TEST_POSTGRESQL_URI is not set";
    return std::nullopt;
  }

  std::string fresh_uri() override {
    const std::string base = base_uri();
    std::string name = StorageUri::parse(base).database + (keep_history_ ? "_hp" : "_hf");
    if (made_ > 0) name += "_" + std::to_string(made_ + 1);
    ++made_;
    ensure_database(name);
    const std::string uri =
        with_database(base, name, keep_history_ ? "history=preserving" : "history=free");
    auto storage = open_storage(uri);  // creates the schema the first time
    storage->zap_all();
    storage->close();
    return uri;
  }

  bool client_clock() const override { return false; }

 private:
  bool keep_history_;
  int made_ = 0;
};

}  // namespace

std::vector<Backend> backends() { return {{"postgresql", false}, {"postgresql", true}}; }

std::unique_ptr<Context> make_context(const Backend& backend) {
  return std::make_unique<PostgresqlContext>(backend.keep_history);
}

}  // namespace relstore::conformance
