// MySQL/MariaDB: the server RELSTORE_TEST_MYSQL_URI names. Each mode has its own database
// (<db>_hf, <db>_hp; a test's second database <db>_hf_2, …), created on demand, migrated
// to the newest schema and emptied with zap_all when a test asks for it.
#include <cstdlib>

#include "adapters/mysql/adapter.h"
#include "conformance/context.h"
#include "relstore/ops.h"

namespace relstore::conformance {
namespace {

class MysqlContext : public Context {
 public:
  explicit MysqlContext(bool keep_history) : keep_history_(keep_history) {
    if (const char* env = std::getenv("RELSTORE_TEST_MYSQL_URI")) base_ = env;
  }
  std::optional<std::string> unavailable() const override {
    if (base_.empty()) return "RELSTORE_TEST_MYSQL_URI is not set (mysql://user:pw@host:port/db)";
    return std::nullopt;
  }
  std::string fresh_uri() override {
    const StorageUri base = StorageUri::parse(base_);
    std::string db = base.database + (keep_history_ ? "_hp" : "_hf");
    if (++made_ > 1) db += "_" + std::to_string(made_);
    {
      mysql::Connection admin(mysql::connect_params(base, base.options()), "", 0, nullptr);
      admin.exec("CREATE DATABASE IF NOT EXISTS `" + db + "`");
    }
    // The base URI with the database replaced and the mode added.
    std::string uri = base_.substr(0, base_.find('?'));
    uri = uri.substr(0, uri.rfind('/') + 1) + db +
          (keep_history_ ? "?history=preserving" : "?history=free");
    // A database kept from an earlier run is brought to the newest schema first.
    migrate_up(uri, false);
    open_storage(uri)->zap_all();
    return uri;
  }
  bool client_clock() const override { return false; }

 private:
  bool keep_history_;
  std::string base_;
  int made_ = 0;  // databases handed out to this test
};

}  // namespace

std::vector<Backend> backends() { return {{"mysql", false}, {"mysql", true}}; }

std::unique_ptr<Context> make_context(const Backend& backend) {
  return std::make_unique<MysqlContext>(backend.keep_history);
}

}  // namespace relstore::conformance
