#include "config/zconfig.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "config/zodbconvert.h"
#include "relstore/errors.h"
#include "support/temp_dir.h"

namespace relstore {
namespace {

constexpr const char* kPostgresConfig = R"(
%import relstorage
# FileStorage into PostgreSQL, as the RelStorage docs show it.
<filestorage source>
  path /var/zodb/Data.fs
  blob-dir /var/zodb/blobs
</filestorage>

<relstorage destination>
  keep-history false
  blob-dir /var/zodb/relblobs
  cache-local-mb 200
  <postgresql>
    dsn dbname='zodb' user='zope' host='db.example' port=5433 password='s3 cret' sslmode=require
  </postgresql>
</relstorage>
)";

TEST(ZConfig, ParsesSectionsKeysAndImports) {
  const auto f = parse_zconfig(kPostgresConfig, "conv.conf");
  ASSERT_EQ(f.imports, std::vector<std::string>{"relstorage"});
  ASSERT_EQ(f.root.sections.size(), 2u);
  EXPECT_EQ(f.root.sections[0].type, "filestorage");
  EXPECT_EQ(f.root.sections[0].name, "source");
  EXPECT_EQ(f.root.sections[0].get("path"), "/var/zodb/Data.fs");
  EXPECT_EQ(f.root.sections[1].child("postgresql")->line, 13);
}

TEST(ZConfig, ErrorsNameFileAndLine) {
  try {
    parse_zconfig("<relstorage x>\n  <postgresql>\n  </mysql>\n", "bad.conf");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.conf:3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_zconfig("<filestorage source>\n path x\n", "open.conf"), ConfigError);
  EXPECT_THROW(parse_zconfig("</filestorage>\n", "close.conf"), ConfigError);
}

// ZConfig's "$$" and "$(NAME)" (an environment variable; passwords are often given so);
// "$name" would be a %define, which is refused rather than kept as text.
TEST(ZConfig, DollarSubstitutionsAreZConfigs) {
  setenv("RELSTORE_TEST_ZCONFIG_DIR", "/srv/zodb", 1);
  const auto f = parse_zconfig(
      "<FileStorage Source>\n path $(RELSTORE_TEST_ZCONFIG_DIR)/Data$$1.fs\n</filestorage>\n",
      "d.conf");
  ASSERT_EQ(f.root.sections.size(), 1u);
  EXPECT_EQ(f.root.sections[0].name, "source");
  EXPECT_EQ(f.root.sections[0].get("path"), "/srv/zodb/Data$1.fs");
  const auto error = [](const std::string& value) {
    try {
      parse_zconfig("<filestorage source>\n path " + value + "\n</filestorage>\n", "e.conf");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(error("$(RELSTORE_TEST_ZCONFIG_UNSET)/x")
                .find("e.conf:2: the environment variable "
                      "'RELSTORE_TEST_ZCONFIG_UNSET' in the value of 'path' is not set"),
            std::string::npos)
      << error("$(RELSTORE_TEST_ZCONFIG_UNSET)/x");
  EXPECT_NE(error("$dir/x").find("refers to a %define"), std::string::npos) << error("$dir/x");
  EXPECT_NE(error("pa$ word").find("must be followed"), std::string::npos);
  EXPECT_NE(error("$(OPEN").find("without ')'"), std::string::npos);
}

// A password with a '$' in it is a substitution error; the message names the key, never
// any part of the value.
TEST(ZConfig, SubstitutionErrorsShowNoPassword) {
  for (const std::string value : {"Pa$(ssw0rd", "Pa$sw0rdSecret", "Pa$(sw0rdSecret)", "Pa$ x"}) {
    try {
      parse_zconfig("<mysql>\n passwd " + value + "\n</mysql>\n", "p.conf");
      ADD_FAILURE() << value << " accepted";
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("p.conf:2:"), std::string::npos) << what;
      EXPECT_NE(what.find("'passwd'"), std::string::npos) << what;
      EXPECT_EQ(what.find("sw0rd"), std::string::npos) << what;
    }
  }
}

// ZConfig refuses a key given twice in one section; the second line must not be dropped.
TEST(ZConfig, AKeyGivenTwiceIsAnError) {
  try {
    parse_zconfig(
        "<relstorage destination>\n keep-history false\n keep-history true\n"
        "</relstorage>\n",
        "twice.conf");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("twice.conf:3: 'keep-history' is given twice in "
                                         "<relstorage>"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(parse_zconfig("<a>\n x 1\n</a>\n<b>\n x 2\n</b>\n", "apart.conf"));
}

TEST(Zodbconvert, FileStorageToPostgresql) {
  const auto c = zodbconvert_config_from_text(kPostgresConfig, "conv.conf");
  EXPECT_EQ(c.source.uri.scheme, Scheme::file);
  EXPECT_EQ(c.source.uri.database, "/var/zodb/Data.fs");
  EXPECT_EQ(c.source.blob_dir, "/var/zodb/blobs");
  EXPECT_EQ(c.destination.uri.scheme, Scheme::postgresql);
  EXPECT_EQ(c.destination.uri.database, "zodb");
  EXPECT_EQ(c.destination.uri.user, "zope");
  EXPECT_EQ(c.destination.uri.password, "s3 cret");
  EXPECT_EQ(c.destination.uri.host, "db.example");
  EXPECT_EQ(c.destination.uri.port, 5433);
  EXPECT_EQ(c.destination.uri.params.at("sslmode"), "require");
  EXPECT_EQ(c.destination.uri.options().history, HistoryMode::free);
  EXPECT_EQ(c.destination.blob_dir, "/var/zodb/relblobs");
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("cache-local-mb"), std::string::npos);
  EXPECT_EQ(c.destination.uri.redacted().find("s3 cret"), std::string::npos);
}

TEST(Zodbconvert, MysqlAndSqliteSections) {
  const auto c = zodbconvert_config_from_text(R"(
<relstorage source>
  <mysql>
    host 127.0.0.1
    port 3307
    user zope
    passwd pw
    db zodb
    unix_socket /run/mysqld.sock
    connect_timeout 3
    compress true
  </mysql>
</relstorage>
<relstorage destination>
  keep-history true
  <sqlite3>
    data-dir /srv/sqlite
    <pragmas>
      cache_size 10000
      mmap_size 64MB
      journal_size_limit 1000
      journal_size_limit 2000
    </pragmas>
  </sqlite3>
</relstorage>
)",
                                              "c.conf");
  EXPECT_EQ(c.source.uri.scheme, Scheme::mysql);
  EXPECT_EQ(c.source.uri.port, 3307);
  EXPECT_EQ(c.source.uri.password, "pw");
  EXPECT_EQ(c.source.uri.database, "zodb");
  EXPECT_EQ(c.source.uri.params.at("unix_socket"), "/run/mysqld.sock");
  EXPECT_EQ(c.source.uri.params.at("connect_timeout"), "3");
  EXPECT_EQ(c.source.uri.params.at("compress"), "true");
  EXPECT_TRUE(c.warnings.empty()) << c.warnings.front();
  EXPECT_EQ(c.source.uri.options().history, HistoryMode::preserving);  // RelStorage's default
  EXPECT_EQ(c.destination.uri.scheme, Scheme::sqlite);
  EXPECT_EQ(c.destination.uri.database, "/srv/sqlite");
  EXPECT_EQ(c.destination.uri.params.at("pragma.cache_size"), "10000");
  // RelStorage's byte-size pragmas take a unit; <pragmas> keys may repeat (the last wins).
  EXPECT_EQ(c.destination.uri.params.at("pragma.mmap_size"), std::to_string(64 << 20));
  EXPECT_EQ(c.destination.uri.params.at("pragma.journal_size_limit"), "2000");
}

// cache_size with a unit is given to SQLite in KiB (a negative cache_size); a unit that
// is not one is an error naming the key.
TEST(Zodbconvert, SqlitePragmaSizesTakeZConfigUnits) {
  const auto destination = [](const std::string& pragma) {
    return zodbconvert_config_from_text(
        "<filestorage source>\n path /tmp/x.fs\n</filestorage>\n<relstorage destination>\n"
        "<sqlite3>\n data-dir /tmp/d\n<pragmas>\n" +
            pragma + "\n</pragmas>\n</sqlite3>\n</relstorage>\n",
        "sizes.conf");
  };
  EXPECT_EQ(destination("cache_size 100MB").destination.uri.params.at("pragma.cache_size"),
            "-102400");
  EXPECT_EQ(destination("page_size 8kb").destination.uri.params.at("pragma.page_size"), "8192");
  EXPECT_EQ(destination("cache_size -2000").destination.uri.params.at("pragma.cache_size"),
            "-2000");
  try {
    destination("mmap_size 10TB");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("mmap_size '10TB' is not a size"), std::string::npos)
        << e.what();
  }
}

// A port with anything after its digits is an error (std::stoi read "5432x" as 5432).
TEST(Zodbconvert, PortsAreWholeNumbers) {
  const auto config = [](const std::string& adapter) {
    return "<relstorage source>\n" + adapter +
           "</relstorage>\n<filestorage destination>\n path /tmp/x.fs\n</filestorage>\n";
  };
  for (const std::string adapter :
       {"<postgresql>\n dsn dbname=z port=5432x\n</postgresql>\n",
        "<mysql>\n db z\n port 3307x\n</mysql>\n", "<mysql>\n db z\n port 70000\n</mysql>\n"}) {
    try {
      zodbconvert_config_from_text(config(adapter), "ports.conf");
      ADD_FAILURE() << adapter << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("is not a number 1-65535"), std::string::npos)
          << e.what();
    }
  }
}

TEST(Zodbconvert, MissingSectionsAndAdaptersAreErrors) {
  EXPECT_THROW(zodbconvert_config_from_text("<filestorage source>\npath x\n</filestorage>\n", "a"),
               ConfigError);
  EXPECT_THROW(zodbconvert_config_from_text(
                   "<filestorage source>\npath x\n</filestorage>\n<relstorage destination>\n"
                   "</relstorage>\n",
                   "b"),
               ConfigError);
  EXPECT_THROW(zodbconvert_config_from_text(
                   "<zeoclient source>\n</zeoclient>\n<filestorage destination>\npath y\n"
                   "</filestorage>\n",
                   "c"),
               ConfigError);
}

// keep-history is a ZConfig boolean: any case; a value that is none is an error, never
// quietly "false" (a history-free destination drops every old revision).
TEST(Zodbconvert, KeepHistoryIsAZConfigBoolean) {
  const auto with = [](const std::string& value) {
    return zodbconvert_config_from_text(
        "<filestorage source>\npath x\n</filestorage>\n<relstorage destination>\n"
        "keep-history " +
            value + "\n<sqlite3>\ndata-dir d\n</sqlite3>\n</relstorage>\n",
        "k.conf");
  };
  EXPECT_EQ(with("True").destination.uri.options().history, HistoryMode::preserving);
  EXPECT_EQ(with("YES").destination.uri.options().history, HistoryMode::preserving);
  EXPECT_EQ(with("Off").destination.uri.options().history, HistoryMode::free);
  EXPECT_EQ(with("false").destination.uri.options().history, HistoryMode::free);
  try {
    with("ture");
    FAIL() << "a misspelt boolean was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("k.conf:4: keep-history 'ture' is not a boolean"),
              std::string::npos)
        << e.what();
  }
}

// Two sections named source (or destination) are an error, not "the last one wins"; a
// read-only destination is refused; FileStorage options relstore does not use are warned
// about.
TEST(Zodbconvert, DuplicateSectionsAndAReadOnlyDestinationAreErrors) {
  const std::string dest = "<filestorage destination>\npath y\n</filestorage>\n";
  try {
    zodbconvert_config_from_text(
        "<filestorage source>\npath a\n</filestorage>\n<filestorage source>\npath b\n"
        "</filestorage>\n" +
            dest,
        "dup.conf");
    ADD_FAILURE() << "two source sections accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("dup.conf:4: a second storage section named 'source' "
                                         "(the first is at line 1)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(zodbconvert_config_from_text(
                   "<filestorage source>\npath a\n</filestorage>\n<filestorage destination>\n"
                   "path y\nread-only true\n</filestorage>\n",
                   "ro.conf"),
               ConfigError);
  const auto c = zodbconvert_config_from_text(
      "<filestorage source>\npath a\nread-only true\nquota 10MB\n</filestorage>\n" + dest,
      "ok.conf");
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("quota"), std::string::npos) << c.warnings[0];
}

TEST(Zodbconvert, LibpqUriDsn) {
  const auto u = uri_from_libpq_dsn("postgresql://a:b@h:1/d");
  EXPECT_EQ(u.database, "d");
  EXPECT_EQ(u.password, "b");
}

// As with RelStorage's MySQLdb, no host (or "localhost") without a port means the local
// server's Unix socket; $MYSQL_UNIX_PORT names it as it does for libmysqlclient.
TEST(Zodbconvert, MysqlWithoutHostUsesTheLocalSocket) {
  const auto source = [](const std::string& keys) {
    return zodbconvert_config_from_text("<relstorage source>\n<mysql>\n db z\n" + keys +
                                            "</mysql>\n</relstorage>\n<filestorage "
                                            "destination>\n path /tmp/x.fs\n</filestorage>\n",
                                        "socket.conf")
        .source.uri;
  };
  testing::TempDir d;
  const std::string socket = d.sub("mysqld.sock");
  std::ofstream(socket) << "";  // stands in for the server's socket
  ::setenv("MYSQL_UNIX_PORT", socket.c_str(), 1);
  EXPECT_EQ(source("").params.at("unix_socket"), socket);
  EXPECT_EQ(source(" host localhost\n").params.at("unix_socket"), socket);
  EXPECT_EQ(source(" unix_socket /srv/my.sock\n").params.at("unix_socket"), "/srv/my.sock");
  // No such socket on this system: TCP to localhost, as without this rule.
  ::setenv("MYSQL_UNIX_PORT", d.sub("none.sock").c_str(), 1);
  EXPECT_EQ(source("").params.count("unix_socket"), 0u);
  ::unsetenv("MYSQL_UNIX_PORT");
  // A host, or a port, means TCP.
  EXPECT_EQ(source(" host db.example\n").params.count("unix_socket"), 0u);
  const auto tcp = source(" host localhost\n port 3307\n");
  EXPECT_EQ(tcp.params.count("unix_socket"), 0u);
  EXPECT_EQ(tcp.port, 3307);
}

// shared-blob-dir false makes blob-dir RelStorage's cache of blobs kept in the database:
// no blob store to copy, so it is not used (and said so).
TEST(Zodbconvert, ABlobCacheIsNotABlobStore) {
  const auto config = [](const std::string& shared) {
    return zodbconvert_config_from_text("<relstorage source>\n blob-dir /var/cache/blobs\n" +
                                            shared +
                                            "<sqlite3>\n data-dir /srv/db\n</sqlite3>\n"
                                            "</relstorage>\n<filestorage destination>\n path "
                                            "/tmp/x.fs\n</filestorage>\n",
                                        "cache.conf");
  };
  const auto cache = config(" shared-blob-dir false\n");
  EXPECT_EQ(cache.source.blob_dir, "");
  ASSERT_EQ(cache.warnings.size(), 1u);
  EXPECT_NE(cache.warnings[0].find("is a blob cache"), std::string::npos) << cache.warnings[0];
  const auto shared = config(" shared-blob-dir true\n");
  EXPECT_EQ(shared.source.blob_dir, "/var/cache/blobs");
  EXPECT_TRUE(shared.warnings.empty());
  EXPECT_EQ(config("").source.blob_dir, "/var/cache/blobs");  // RelStorage's default: shared
}

}  // namespace
}  // namespace relstore
