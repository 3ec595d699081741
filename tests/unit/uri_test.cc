#include "relstore/uri.h"

#include <gtest/gtest.h>

#include "config/zodbconvert.h"
#include "option_values.h"
#include "relstore/errors.h"

namespace relstore {
namespace {

TEST(Uri, SqliteAbsoluteAndRelative) {
  auto u = StorageUri::parse("sqlite:///var/lib/zodb");
  EXPECT_EQ(u.scheme, Scheme::sqlite);
  EXPECT_EQ(u.database, "/var/lib/zodb");
  EXPECT_EQ(StorageUri::parse("sqlite:var/db").database, "var/db");
  EXPECT_EQ(StorageUri::parse("sqlite://localhost/tmp/x").database, "/tmp/x");
}

TEST(Uri, SqliteRejectsAHost) { EXPECT_THROW(StorageUri::parse("sqlite://var/db"), ConfigError); }

TEST(Uri, PostgresqlFull) {
  auto u = StorageUri::parse("postgresql://zope:s%40cret@db.example:5433/plone?history=free");
  EXPECT_EQ(u.scheme, Scheme::postgresql);
  EXPECT_EQ(u.user, "zope");
  EXPECT_EQ(u.password, "s@cret");
  EXPECT_EQ(u.host, "db.example");
  EXPECT_EQ(u.port, 5433);
  EXPECT_EQ(u.database, "plone");
  EXPECT_EQ(u.options().history, HistoryMode::free);
}

TEST(Uri, MysqlWithoutPortAndIpv6) {
  auto u = StorageUri::parse("mysql://root@localhost/zodb");
  EXPECT_EQ(u.scheme, Scheme::mysql);
  EXPECT_FALSE(u.port.has_value());
  EXPECT_EQ(u.host, "localhost");
  auto v6 = StorageUri::parse("postgresql://u:p@[::1]:5432/db");
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.port, 5432);
}

// libpq's lists of hosts (failover to the next): given to libpq as its host and port lists.
TEST(Uri, PostgresqlListsOfHosts) {
  const auto u = StorageUri::parse("postgresql://u:pw@db1:5433,db2,[::1]:5435/zodb");
  EXPECT_EQ(u.host, "");
  EXPECT_FALSE(u.port);
  EXPECT_EQ(u.params.at("host"), "db1,db2,::1");
  EXPECT_EQ(u.params.at("port"), "5433,,5435");
  EXPECT_EQ(u.database, "zodb");
  EXPECT_EQ(u.password, "pw");
  EXPECT_EQ(StorageUri::parse("postgresql://u@db1,db2/zodb").params.count("port"), 0u);
  EXPECT_THROW(StorageUri::parse("postgresql://u@db1,,db2/zodb"), ConfigError);
  EXPECT_EQ(uri_from_libpq_dsn("host=db1,db2 port=5433,5434 dbname=z").params.at("port"),
            "5433,5434");
}

TEST(Uri, FileUri) {
  auto u = StorageUri::parse("file:///srv/Data.fs");
  EXPECT_EQ(u.scheme, Scheme::file);
  EXPECT_EQ(u.database, "/srv/Data.fs");
}

TEST(Uri, MalformedAndUnknown) {
  EXPECT_THROW(StorageUri::parse("nonsense"), ConfigError);
  EXPECT_THROW(StorageUri::parse("oracle://x/y"), ConfigError);
  EXPECT_THROW(StorageUri::parse("postgresql://u@h:99999/db"), ConfigError);
  EXPECT_THROW(StorageUri::parse("postgresql://u@h:abc/db"), ConfigError);
  EXPECT_THROW(StorageUri::parse("postgresql:db"), ConfigError);
  EXPECT_THROW(StorageUri::parse("sqlite://"), ConfigError);
}

TEST(Uri, PasswordsNeverAppear) {
  auto u = StorageUri::parse("postgresql://zope:hunter2@h/db?password=hunter3&sslmode=require");
  const std::string r = u.redacted();
  EXPECT_EQ(r.find("hunter"), std::string::npos) << r;
  EXPECT_NE(r.find("zope:***@h"), std::string::npos) << r;
  EXPECT_NE(r.find("sslmode=require"), std::string::npos) << r;
  try {
    StorageUri::parse("postgresql://zope:hunter2@h:bad/db");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).find("hunter2"), std::string::npos) << e.what();
  }
  EXPECT_EQ(redact_secrets("dsn='host=x password=hunter2 user=z'").find("hunter2"),
            std::string::npos);
  EXPECT_EQ(redact_secrets("mysql://a:hunter2@b/c").find("hunter2"), std::string::npos);
  // libpq's passphrase of the client key.
  const std::string ssl = StorageUri::parse("postgresql://u@h/db?sslpassword=hunter4").redacted();
  EXPECT_EQ(ssl.find("hunter4"), std::string::npos) << ssl;
  EXPECT_EQ(redact_secrets("host=x sslpassword=hunter4 user=z"), "host=x sslpassword=*** user=z");
}

// A password with an unescaped '/', '?' or '#' cut the authority short, and its first part
// came back in "port '…' is not a number". Now the error names the cause, not the secret,
// while an '@' in a query value stays allowed.
TEST(Uri, AnUnescapedSlashOrQuestionMarkInAPasswordIsNamedNotQuoted) {
  for (const char* text :
       {"postgresql://bob:s3cr/etpw@db.example.com/zodb", "mysql://bob:hunter2/x@h/zodb",
        "postgresql://bob:pw?secret@h/db", "mysql://bob:pw#secret@h:3306/db"}) {
    try {
      StorageUri::parse(text);
      ADD_FAILURE() << "parsed " << text;
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      for (const char* secret : {"s3cr", "etpw", "hunter2", "secret"}) {
        EXPECT_EQ(what.find(secret), std::string::npos) << what;
      }
      EXPECT_NE(what.find("percent-encode"), std::string::npos) << what;
    }
  }
  EXPECT_EQ(StorageUri::parse("postgresql://h/db?application_name=me@host").host, "h");
  EXPECT_EQ(StorageUri::parse("postgresql://bob:s3cr%2Fetpw@h/db").password, "s3cr/etpw");
}

TEST(Uri, RedactSecretsInFreeText) {
  EXPECT_EQ(redact_secrets("host=x password='a b' user=z"), "host=x password=*** user=z");
  EXPECT_EQ(redact_secrets("PASSWORD = hunter2&next=1"), "PASSWORD = ***&next=1");
  EXPECT_EQ(redact_secrets("failed: postgresql://u:secret@h:5/db"),
            "failed: postgresql://u:***@h:5/db");
  EXPECT_EQ(redact_secrets("sqlite:///a/b:c@d"), "sqlite:///a/b:c@d");
  EXPECT_EQ(redact_secrets("no secrets here"), "no secrets here");
  EXPECT_EQ(redact_secrets("mypasswordfield=1"), "mypasswordfield=1");
}

TEST(Uri, TextRoundTripsWithThePassword) {
  const auto u = StorageUri::parse("mysql://a%40b:p%2Fw@[::1]:3306/db?unix_socket=%2Frun%2Fs");
  const auto again = StorageUri::parse(u.text());
  EXPECT_EQ(again.user, "a@b");
  EXPECT_EQ(again.password, "p/w");
  EXPECT_EQ(again.host, "::1");
  EXPECT_EQ(again.params.at("unix_socket"), "/run/s");
}

TEST(Uri, Options) {
  auto o = StorageUri::parse("sqlite:///x?read_only=1&cache_mb=8&commit_lock_timeout=2.5&pragma=y")
               .options();
  EXPECT_TRUE(o.read_only);
  EXPECT_EQ(o.cache_mb, 8u);
  EXPECT_DOUBLE_EQ(o.commit_lock_timeout, 2.5);
  EXPECT_EQ(o.driver.at("pragma"), "y");
  EXPECT_EQ(StorageUri::parse("sqlite:///x?keep_history=false").options().history,
            HistoryMode::free);
  EXPECT_THROW(StorageUri::parse("sqlite:///x?history=maybe").options(), ConfigError);
  EXPECT_THROW(StorageUri::parse("sqlite:///x?read_only=perhaps").options(), ConfigError);
  EXPECT_THROW(StorageUri::parse("sqlite:///x?cache_mb=-3").options(), ConfigError);
  // Not numbers a wait can be made of (an infinite timeout became a 1 ms one).
  for (const char* v : {"inf", "nan", "infinity", "-0.5"}) {
    EXPECT_THROW(StorageUri::parse(std::string("sqlite:///x?commit_lock_timeout=") + v).options(),
                 ConfigError)
        << v;
  }
}

// RelStorage's blob-cache-size and blob-cache-size-check, as ZConfig reads sizes.
TEST(Uri, BlobCacheSizeTakesZConfigSizes) {
  const auto size = [](const std::string& v) {
    return StorageUri::parse("sqlite:///x?blob_dir=/c&blob_cache_size=" + v)
        .options()
        .blob_cache_size;
  };
  EXPECT_EQ(size("1000"), 1000u);
  EXPECT_EQ(size("10KB"), 10u << 10);
  EXPECT_EQ(size("512mb"), 512ull << 20);
  EXPECT_EQ(size("2%20GB"), 2ull << 30);
  EXPECT_EQ(size("1TB"), 1ull << 40);
  for (const char* bad : {"", "ten", "-5", "5XB", "1.5GB", "99999999999TB"}) {
    EXPECT_THROW(size(bad), ConfigError) << bad;
  }
  const auto o =
      StorageUri::parse("sqlite:///x?blob-dir=/c&blob-cache-size=1GB&blob-cache-size-check=25")
          .options();
  EXPECT_EQ(o.blob_cache_size, 1ull << 30);
  EXPECT_DOUBLE_EQ(o.blob_cache_size_check, 25);
  EXPECT_FALSE(StorageUri::parse("sqlite:///x?blob_dir=/c").options().blob_cache_size);
  EXPECT_DOUBLE_EQ(StorageUri::parse("sqlite:///x").options().blob_cache_size_check, 10);
  for (const char* bad : {"0", "101", "x"}) {
    EXPECT_THROW(
        StorageUri::parse(std::string("sqlite:///x?blob_dir=/c&blob_cache_size_check=") + bad)
            .options(),
        ConfigError)
        << bad;
  }
  // A limit of no directory is a mistake, said so.
  try {
    StorageUri::parse("sqlite:///x?blob_cache_size=1GB").options();
    ADD_FAILURE() << "blob_cache_size without blob_dir";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("give blob_dir"), std::string::npos) << e.what();
  }
}

// An option given twice, or the history mode under two spellings, was settled silently by
// whichever came last (in key order): "?history=preserving&history=free" converted into a
// history-free destination.
TEST(Uri, AnOptionGivenTwiceIsRefused) {
  for (const char* uri : {"sqlite:///x?history=preserving&history=free",
                          "postgresql://u:secret@h/db?password=a&password=b"}) {
    try {
      StorageUri::parse(uri);
      ADD_FAILURE() << uri;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("given twice"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("secret"), std::string::npos) << e.what();
    }
  }
  for (const char* uri :
       {"sqlite:///x?history=free&keep_history=true",
        "sqlite:///x?keep-history=true&keep_history=true", "sqlite:///x?read_only=1&read-only=0"}) {
    EXPECT_THROW(StorageUri::parse(uri).options(), ConfigError) << uri;
  }
}

// A part of a PostgreSQL address given again as an option was settled silently by libpq
// (the option won), and a list of hosts overwrote the option.
TEST(Uri, AnAddressPartGivenAgainAsAnOptionIsRefused) {
  EXPECT_THROW(StorageUri::parse("postgresql://u@h1:1,h2:2/db?port=6000"), ConfigError);
  EXPECT_THROW(StorageUri::parse("postgresql://u@h1:1,h2:2/db?host=x"), ConfigError);
}

// SQLite reads pragma names in any case: so does the check of the ones relstore sets.
TEST(Uri, PragmasRelstoreSetsAreRefusedInAnyCase) {
  EXPECT_NE(sqlite_pragma_problem("JOURNAL_MODE", "delete"), "");
  EXPECT_NE(sqlite_pragma_problem("Query_Only", "1"), "");
  EXPECT_NE(sqlite_pragma_problem("busy_timeout", "5"), "");
  EXPECT_EQ(sqlite_pragma_problem("Journal_Mode", "WAL"), "");
  EXPECT_EQ(sqlite_pragma_problem("cache_size", "-2000"), "");
}

}  // namespace
}  // namespace relstore
