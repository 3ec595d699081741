#include "support/server_db.h"

#include <cstdlib>
#include <mutex>
#include <set>
#include <sstream>

#include "relstore/errors.h"

#ifdef RELSTORE_HAVE_POSTGRESQL
#include "adapters/postgresql/adapter.h"
#include "adapters/postgresql/driver.h"
#endif
#ifdef RELSTORE_HAVE_MYSQL
#include "adapters/mysql/adapter.h"
#endif

namespace relstore::testing {
namespace {

void create_database(Scheme scheme, const StorageUri& base, const std::string& name) {
  static std::mutex mu;
  static std::set<std::string> known;
  std::lock_guard lock(mu);
  if (known.count(scheme_name(scheme) + name)) return;
  switch (scheme) {
#ifdef RELSTORE_HAVE_POSTGRESQL
    case Scheme::postgresql: {
      postgresql::Conn admin(postgresql::location_of(base, base.options()).connect, nullptr);
      const auto found = admin.simple("SELECT 1 FROM pg_database WHERE datname = '" + name + "'",
                                      postgresql::Context::other);
      if (found.front().rows() == 0) {
        try {
          admin.simple("CREATE DATABASE \"" + name + "\"", postgresql::Context::other);
        } catch (const StorageError& e) {
          // Another test executable may have created it just now.
          if (std::string(e.what()).find("already exists") == std::string::npos) throw;
        }
      }
      break;
    }
#endif
#ifdef RELSTORE_HAVE_MYSQL
    case Scheme::mysql: {
      mysql::Connection admin(mysql::connect_params(base, base.options()), "", 0, nullptr);
      admin.exec("CREATE DATABASE IF NOT EXISTS `" + name + "`");
      break;
    }
#endif
    default:
      throw ConfigError(std::string("no test database support for ") + scheme_name(scheme));
  }
  known.insert(scheme_name(scheme) + name);
}

}  // namespace

std::optional<std::string> server_base_uri(Scheme scheme) {
  const char* env = nullptr;
#ifdef RELSTORE_HAVE_POSTGRESQL
  if (scheme == Scheme::postgresql) env = std::getenv("RELSTORE_TEST_POSTGRESQL_URI");
#endif
#ifdef RELSTORE_HAVE_MYSQL
  if (scheme == Scheme::mysql) env = std::getenv("RELSTORE_TEST_MYSQL_URI");
#endif
  if (!env || !*env) return std::nullopt;
  return std::string(env);
}

bool server_required(Scheme scheme) {
  const char* env = std::getenv("RELSTORE_TEST_REQUIRE");
  if (!env) return false;
  std::stringstream list(env);
  std::string item;
  while (std::getline(list, item, ',')) {
    if (item == "all" || item == scheme_name(scheme)) return true;
  }
  return false;
}

std::string server_database_uri(Scheme scheme, const std::string& suffix, bool keep_history) {
  const auto base_text = server_base_uri(scheme);
  if (!base_text) throw ConfigError(std::string("no test server for ") + scheme_name(scheme));
  const StorageUri base = StorageUri::parse(*base_text);
  StorageUri uri = base;
  uri.database = base.database + suffix;
  uri.params["history"] = keep_history ? "preserving" : "free";
  create_database(scheme, base, uri.database);
  return uri.text();
}

}  // namespace relstore::testing
