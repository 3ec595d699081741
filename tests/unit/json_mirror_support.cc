#include "json_mirror_support.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cctype>

#include "relstore/errors.h"
#include "relstore/json_mirror.h"
#include "relstore/sample.h"
#include "relstore/storage.h"
#include "support/server_db.h"

#ifdef RELSTORE_HAVE_POSTGRESQL
#include "adapters/postgresql/adapter.h"
#include "adapters/postgresql/driver.h"
#endif
#ifdef RELSTORE_HAVE_MYSQL
#include "adapters/mysql/adapter.h"
#endif

namespace relstore::mirror_test {
namespace {

Rows sqlite_query(const std::string& dir, const std::string& sql) {
  sqlite3* db = nullptr;
  Rows out;
  if (sqlite3_open_v2((dir + "/main.sqlite3").c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) !=
      SQLITE_OK) {
    sqlite3_close(db);
    throw StorageError("cannot open " + dir);
  }
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
    const std::string why = sqlite3_errmsg(db);
    sqlite3_close(db);
    throw StorageError(why + " in: " + sql);
  }
  sqlite3_busy_timeout(db, 10000);
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    std::vector<std::string> row;
    for (int c = 0; c < sqlite3_column_count(s); ++c) {
      const auto* t = sqlite3_column_text(s, c);
      row.emplace_back(t ? reinterpret_cast<const char*>(t) : "NULL");
    }
    out.push_back(std::move(row));
  }
  if (rc != SQLITE_DONE) {
    const std::string why = sqlite3_errmsg(db);
    sqlite3_finalize(s);
    sqlite3_close(db);
    throw StorageError(why + " in: " + sql);
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return out;
}

#ifdef RELSTORE_HAVE_POSTGRESQL
Rows postgresql_query(const std::string& uri, const std::string& sql) {
  const StorageUri parsed = StorageUri::parse(uri);
  StorageOptions options = parsed.options();
  postgresql::Conn conn(postgresql::location_of(parsed, options).connect, nullptr);
  const auto results = conn.simple(sql, postgresql::Context::other);
  Rows out;
  const postgresql::Result& r = results.back();
  for (int i = 0; i < r.rows(); ++i) {
    std::vector<std::string> row;
    for (int c = 0; c < r.columns(); ++c) row.push_back(r.is_null(i, c) ? "NULL" : r.bytes(i, c));
    out.push_back(std::move(row));
  }
  return out;
}
#endif

#ifdef RELSTORE_HAVE_MYSQL
Rows mysql_query(const std::string& uri, const std::string& sql) {
  const StorageUri parsed = StorageUri::parse(uri);
  mysql::Connection conn(mysql::connect_params(parsed, parsed.options()),
                         "SET SESSION sql_mode = 'ANSI_QUOTES,STRICT_TRANS_TABLES'", 1, nullptr);
  Rows out;
  conn.batch(
      sql, 1,
      [&](mysql::Rows& r) {
        out.clear();  // the last result set
        while (r.next()) {
          std::vector<std::string> row;
          for (int c = 0; c < r.columns(); ++c) row.push_back(r.is_null(c) ? "NULL" : r.bytes(c));
          out.push_back(std::move(row));
        }
      },
      mysql::Context::read);
  return out;
}
#endif

}  // namespace

std::vector<Backend> backends() {
  std::vector<Backend> out = {{Scheme::sqlite, false}, {Scheme::sqlite, true}};
#ifdef RELSTORE_HAVE_POSTGRESQL
  out.push_back({Scheme::postgresql, false});
  out.push_back({Scheme::postgresql, true});
#endif
#ifdef RELSTORE_HAVE_MYSQL
  out.push_back({Scheme::mysql, false});
  out.push_back({Scheme::mysql, true});
#endif
  return out;
}

std::string backend_name(const Backend& b) {
  return std::string(scheme_name(b.scheme)) + (b.keep_history ? "_hp" : "_hf");
}

std::optional<std::string> unavailable(const Backend& b) {
  // backends() lists only what this build has: a server backend needs only its URI.
  if (b.scheme == Scheme::sqlite) return std::nullopt;
  if (!testing::server_base_uri(b.scheme)) {
    return std::string(scheme_name(b.scheme)) + " unavailable: no server URI in the environment";
  }
  return std::nullopt;
}

bool required(const Backend& b) {
  return b.scheme != Scheme::sqlite && testing::server_required(b.scheme);
}

std::string empty_database(const Backend& b, const testing::TempDir& dir, const std::string& name) {
  if (b.scheme == Scheme::sqlite) {
    return "sqlite://" + dir.sub("db") + (b.keep_history ? "?history=preserving" : "?history=free");
  }
  std::string suffix = "_jm_" + name;
  for (char& c : suffix) c = std::isalnum(static_cast<unsigned char>(c)) ? std::tolower(c) : '_';
  suffix = suffix.substr(0, 40) + (b.keep_history ? "_hp" : "_hf");
  const std::string uri = testing::server_database_uri(b.scheme, suffix, b.keep_history);
  open_storage(uri)->zap_all();  // empties the mirror and its progress too
  mirror_disable(uri);
  return uri;
}

std::string sample_database(const Backend& b, const testing::TempDir& dir, uint64_t objects,
                            uint64_t seed) {
  const std::string uri =
      empty_database(b, dir, ::testing::UnitTest::GetInstance()->current_test_info()->name());
  SampleOptions o;
  o.objects = objects;
  o.seed = seed;
  write_sample(uri, o);
  return uri;
}

Rows query(const std::string& uri, const std::string& sql) {
  const StorageUri parsed = StorageUri::parse(uri);
  if (parsed.scheme == Scheme::sqlite) return sqlite_query(parsed.database, sql);
#ifdef RELSTORE_HAVE_POSTGRESQL
  if (parsed.scheme == Scheme::postgresql) return postgresql_query(uri, sql);
#endif
#ifdef RELSTORE_HAVE_MYSQL
  if (parsed.scheme == Scheme::mysql) return mysql_query(uri, sql);
#endif
  throw ConfigError("no test query support for " + parsed.redacted());
}

}  // namespace relstore::mirror_test
