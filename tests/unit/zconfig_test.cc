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
  path /tmp/Data.fs
  blob-dir /tmp/blobs
</filestorage>

<relstorage destination>
  keep-history false
  blob-dir /tmp/relblobs
  shared-blob-dir true
  cache-local-mb 200
  <postgresql>
    dsn dbname='zodb' user='zope' host='db.example' port=5433 password='s3 cret' sslmode=require
  </postgresql>
</relstorage>
)";

// The message of the ConfigError `parse` throws, or "accepted".
template <class F>
std::string error_of(F&& parse) {
  try {
    parse();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(ZConfig, ParsesSectionsKeysAndImports) {
  const auto f = parse_zconfig(kPostgresConfig, "conv.conf");
  ASSERT_EQ(f.imports, std::vector<std::string>{"relstorage"});
  ASSERT_EQ(f.root.sections.size(), 2u);
  EXPECT_EQ(f.root.sections[0].type, "filestorage");
  EXPECT_EQ(f.root.sections[0].name, "source");
  EXPECT_EQ(f.root.sections[0].get("path"), "/tmp/Data.fs");
  EXPECT_EQ(f.root.sections[1].child("postgresql")->line, 14);
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
// "$name" names a %define, and one never defined is an error rather than kept as text.
TEST(ZConfig, DollarSubstitutionsAreZConfigs) {
  setenv("RELSTORE_TEST_ZCONFIG_DIR", "/srv/zodb", 1);
  const auto f = parse_zconfig(
      "<FileStorage Source>\n path $(RELSTORE_TEST_ZCONFIG_DIR)/Data$$1.fs\n</filestorage>\n",
      "d.conf");
  ASSERT_EQ(f.root.sections.size(), 1u);
  EXPECT_EQ(f.root.sections[0].name, "source");
  EXPECT_EQ(f.root.sections[0].get("path"), "/srv/zodb/Data$1.fs");
  const auto error = [](const std::string& value) {
    return error_of([&] {
      parse_zconfig("<filestorage source>\n path " + value + "\n</filestorage>\n", "e.conf");
    });
  };
  EXPECT_NE(error("$(RELSTORE_TEST_ZCONFIG_UNSET)/x")
                .find("e.conf:2: the environment variable "
                      "'RELSTORE_TEST_ZCONFIG_UNSET' in the value of 'path' is not set"),
            std::string::npos)
      << error("$(RELSTORE_TEST_ZCONFIG_UNSET)/x");
  EXPECT_NE(error("$dir/x").find("the name 'dir' in the value of 'path' is not defined by a "
                                 "%define"),
            std::string::npos)
      << error("$dir/x");
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
  EXPECT_EQ(c.source.uri.database, "/tmp/Data.fs");
  EXPECT_EQ(c.source.blob_dir, "/tmp/blobs");
  EXPECT_EQ(c.destination.uri.scheme, Scheme::postgresql);
  EXPECT_EQ(c.destination.uri.database, "zodb");
  EXPECT_EQ(c.destination.uri.user, "zope");
  EXPECT_EQ(c.destination.uri.password, "s3 cret");
  EXPECT_EQ(c.destination.uri.host, "db.example");
  EXPECT_EQ(c.destination.uri.port, 5433);
  EXPECT_EQ(c.destination.uri.params.at("sslmode"), "require");
  EXPECT_EQ(c.destination.uri.options().history, HistoryMode::free);
  EXPECT_EQ(c.destination.blob_dir, "/tmp/relblobs");
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("cache-local-mb"), std::string::npos);
  EXPECT_EQ(c.destination.uri.redacted().find("s3 cret"), std::string::npos);
}

TEST(Zodbconvert, MysqlAndSqliteSections) {
  const auto c = zodbconvert_config_from_text(R"(
<relstorage source>
  <mysql>
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
    data-dir /tmp/sqlite
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
  EXPECT_EQ(c.destination.uri.database, "/tmp/sqlite");
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
  // 2**64 bytes would wrap to 0 (mmap quietly off).
  try {
    destination("mmap_size 17179869184 GB");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("mmap_size '17179869184 GB' is too large"),
              std::string::npos)
        << e.what();
  }
}

// A pragma relstore cannot take is refused while the file is read, naming its file and
// line (it used to be refused only when SQLite opened, without them). journal_mode wal is
// what relstore sets anyway, and is accepted.
TEST(Zodbconvert, SqlitePragmaProblemsNameTheFileAndLine) {
  const auto destination = [](const std::string& pragma) {
    return zodbconvert_config_from_text(
        "<filestorage source>\n path /tmp/x.fs\n</filestorage>\n<relstorage destination>\n"
        "<sqlite3>\n data-dir /tmp/d\n<pragmas>\n" +
            pragma + "\n</pragmas>\n</sqlite3>\n</relstorage>\n",
        "pragmas.conf");
  };
  for (const char* pragma :
       {"journal_mode = wal", "journal_mode off", "foreign_keys 0", "cache_size 1;DROP"}) {
    try {
      destination(pragma);
      ADD_FAILURE() << pragma << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("pragmas.conf:8"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(destination("journal_mode WAL").destination.uri.params.at("pragma.journal_mode"),
            "WAL");
  // RelStorage drops busy_timeout (commit-lock-timeout is that wait): so does relstore,
  // saying so, where the URI's pragma.busy_timeout is refused.
  const auto busy = destination("busy_timeout 0");
  EXPECT_EQ(busy.destination.uri.params.count("pragma.busy_timeout"), 0u);
  ASSERT_EQ(busy.warnings.size(), 1u);
  EXPECT_NE(busy.warnings[0].find("pragmas.conf:8: pragma busy_timeout is ignored"),
            std::string::npos)
      << busy.warnings[0];
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
    EXPECT_NE(std::string(e.what()).find("k.conf:5: keep-history 'ture' is not a boolean"),
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

// shared-blob-dir false (RelStorage 3's default) makes blob-dir RelStorage's cache of blobs kept in
// the database: no blob store to copy, so it is not used (and said so).
TEST(Zodbconvert, ABlobCacheIsNotABlobStore) {
  const auto config = [](const std::string& shared) {
    return zodbconvert_config_from_text("<relstorage source>\n blob-dir /var/cache/blobs\n" +
                                            shared +
                                            "<sqlite3>\n data-dir /tmp/db\n</sqlite3>\n"
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
  // RelStorage 3's default is false: a cache.
  EXPECT_EQ(config("").source.blob_dir, "");
}

// ZConfig's %define gives names to $name and ${name} (case-insensitive); a name may be
// defined again only with the same value; %include reads a file beside the including one
// into the same place, with the same names.
TEST(ZConfig, DefinesAndIncludesAreZConfigs) {
  testing::TempDir d;
  std::ofstream(d.sub("adapter.conf")) << "<sqlite3>\n data-dir ${Base}/db\n</sqlite3>\n";
  std::ofstream(d.sub("main.conf")) << "%define base " << d.str() << "\n%define BASE " << d.str()
                                    << "\n<filestorage source>\n path $base/Data.fs\n"
                                       "</filestorage>\n<relstorage destination>\n"
                                       "%include adapter.conf\n</relstorage>\n";
  const auto c = read_zodbconvert_config(d.sub("main.conf"));
  EXPECT_EQ(c.source.uri.database, d.sub("Data.fs"));
  EXPECT_EQ(c.destination.uri.database, d.sub("db"));
  const auto error = [](const std::string& text) {
    return error_of([&] { parse_zconfig(text, "def.conf"); });
  };
  EXPECT_NE(error("%define a 1\n%define A 2\n")
                .find("def.conf:2: %define a gives a name a "
                      "second, different value"),
            std::string::npos)
      << error("%define a 1\n%define A 2\n");
  EXPECT_NE(error("%define 1x y\n").find("def.conf:1: '1x' is not a name"), std::string::npos);
  EXPECT_NE(error("%include /nonexistent/x.conf\n")
                .find("def.conf:1: cannot read the included file /nonexistent/x.conf"),
            std::string::npos);
  // A directory opens as a stream that reads nothing; a bare %include names nothing.
  EXPECT_NE(error("%include " + d.str() + "\n")
                .find("def.conf:1: the included file " + d.str() + " is a directory"),
            std::string::npos);
  EXPECT_NE(error("%include\n").find("def.conf:1: %include names no file"), std::string::npos)
      << error("%include\n");
  // A name the file system refuses to look up (a component longer than 255 bytes) is an
  // unreadable include on its line, not an escaped filesystem_error.
  const std::string long_name = "/tmp/" + std::string(300, 'a') + ".conf";
  EXPECT_NE(error("%include " + long_name + "\n")
                .find("def.conf:1: cannot read the included file " + long_name),
            std::string::npos)
      << error("%include " + long_name + "\n");
  EXPECT_NE(error("%bogus\n").find("unknown directive '%bogus'"), std::string::npos);
  // A mistyped %define shows its name, not the value after it.
  const std::string typo = error("%defin dbpw hunter2\n");
  EXPECT_NE(typo.find("unknown directive '%defin'"), std::string::npos) << typo;
  EXPECT_EQ(typo.find("hunter2"), std::string::npos) << typo;
  // A %define's value is where passwords go: no part of it is shown.
  const std::string secret = error("%define dbpw hunter$secretpart\n");
  EXPECT_NE(secret.find("def.conf:1:"), std::string::npos) << secret;
  EXPECT_EQ(secret.find("secretpart"), std::string::npos) << secret;
  EXPECT_EQ(secret.find("hunter"), std::string::npos) << secret;
  // An error inside an included file names that file and its line.
  std::ofstream(d.sub("broken.conf")) << "\n<a>\n";
  // An included file closes only what it opened.
  std::ofstream(d.sub("closer.conf")) << "</filestorage>\n<filestorage destination>\n";
  std::ofstream(d.sub("splice.conf"))
      << "<filestorage source>\n path /tmp/x.fs\n%include closer.conf\n path /tmp/y.fs\n"
         "</filestorage>\n";
  try {
    read_zodbconvert_config(d.sub("splice.conf"));
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(d.sub("closer.conf") +
                                         ":1: </filestorage> closes no section this included "
                                         "file opened"),
              std::string::npos)
        << e.what();
  }
  // A directory opens as a stream that reads nothing: it is named for what it is.
  try {
    read_zodbconvert_config(d.path().string());
    ADD_FAILURE() << "accepted a directory";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
  std::ofstream(d.sub("outer.conf")) << "%include broken.conf\n";
  try {
    read_zodbconvert_config(d.sub("outer.conf"));
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(d.sub("broken.conf") + ":2: <a> is never closed"),
              std::string::npos)
        << e.what();
  }
}

const char* const kFileDestination = "<filestorage destination>\n path /tmp/x.fs\n</filestorage>\n";

std::string config_error(const std::string& text) {
  return error_of([&] { zodbconvert_config_from_text(text, "e.conf"); });
}

// ZConfig refuses a key no schema defines: a misspelt `keep_history false` must not leave a
// destination keeping history. RelStorage's own keys that a conversion does not use are
// only reported. A key written "passwd=secret" shows no secret.
TEST(Zodbconvert, UnknownKeysAreErrorsAndKnownUnusedOnesWarnings) {
  const std::string sqlite = "<sqlite3>\n data-dir /tmp/d\n</sqlite3>\n</relstorage>\n";
  EXPECT_NE(config_error(std::string(kFileDestination) +
                         "<relstorage source>\n keep_history false\n" + sqlite)
                .find("e.conf:5: 'keep_history' is not an option of <relstorage>"),
            std::string::npos)
      << config_error(std::string(kFileDestination) + "<relstorage source>\n keep_history false\n" +
                      sqlite);
  const std::string mysql = config_error(std::string(kFileDestination) +
                                         "<relstorage source>\n<mysql>\n db z\n "
                                         "passwd=Sup3rSecret\n</mysql>\n</relstorage>\n");
  EXPECT_NE(mysql.find("e.conf:7: 'passwd=…' is not an option of <mysql>"), std::string::npos)
      << mysql;
  EXPECT_EQ(mysql.find("Sup3r"), std::string::npos) << mysql;
  const auto c = zodbconvert_config_from_text(
      std::string(kFileDestination) + "<relstorage source>\n poll-interval 0\n" + sqlite, "w.conf");
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("w.conf:5: option 'poll-interval' of <relstorage> is ignored"),
            std::string::npos)
      << c.warnings[0];
  EXPECT_NE(config_error(std::string(kFileDestination) +
                         "<relstorage source>\n<oracle>\n</oracle>\n</relstorage>\n")
                .find("<oracle> is not a RelStorage adapter"),
            std::string::npos);
}

// A key outside the storage sections, and a section where ZConfig's schemas define none,
// are errors, not quietly ignored.
TEST(Zodbconvert, KeysAndSectionsOutsideTheSchemaAreErrors) {
  const std::string source = "<filestorage source>\n path /tmp/x.fs\n</filestorage>\n";
  EXPECT_NE(config_error("keep-history false\n" + source + kFileDestination)
                .find("e.conf:1: 'keep-history' is outside any section"),
            std::string::npos);
  EXPECT_NE(config_error("<filestorage source>\n path /tmp/x.fs\n<bogus>\n</bogus>\n"
                         "</filestorage>\n" +
                         std::string(kFileDestination))
                .find("e.conf:3: <bogus> is not a section of <filestorage>"),
            std::string::npos);
  EXPECT_NE(config_error("<relstorage source>\n<sqlite3>\n data-dir /tmp/d\n<pragma>\n"
                         "</pragma>\n</sqlite3>\n</relstorage>\n" +
                         std::string(kFileDestination))
                .find("<pragma> is not a section of <sqlite3>"),
            std::string::npos);
}

// Options that decide where data goes or whether a schema is made are honoured or refused,
// never ignored.
TEST(Zodbconvert, OptionsThatDecideWhereDataGoesAreHonoured) {
  const auto destination = [](const std::string& body) {
    return zodbconvert_config_from_text(
               "<filestorage source>\n path /tmp/x.fs\n</filestorage>\n<relstorage "
               "destination>\n" +
                   body + "</relstorage>\n",
               "o.conf")
        .destination;
  };
  // create-schema false: use the database as it is.
  EXPECT_FALSE(destination(" create-schema false\n<sqlite3>\n data-dir /tmp/d\n</sqlite3>\n")
                   .uri.options()
                   .create);
  EXPECT_TRUE(destination("<sqlite3>\n data-dir /tmp/d\n</sqlite3>\n").uri.options().create);
  // libmysqlclient uses the socket only for localhost; another host is reached over TCP.
  const auto tcp = zodbconvert_config_from_text(
      "<relstorage source>\n<mysql>\n host 127.0.0.2\n db z\n unix_socket /tmp/s.sock\n"
      "</mysql>\n</relstorage>\n" +
          std::string(kFileDestination),
      "s.conf");
  EXPECT_EQ(tcp.source.uri.params.count("unix_socket"), 0u);
  ASSERT_EQ(tcp.warnings.size(), 1u);
  EXPECT_NE(tcp.warnings[0].find("s.conf:5: unix_socket is not used"), std::string::npos)
      << tcp.warnings[0];
  // Files of defaults could name another server: refused.
  EXPECT_NE(config_error("<relstorage source>\n<mysql>\n db z\n read_default_file /etc/my.cnf\n"
                         "</mysql>\n</relstorage>\n" +
                         std::string(kFileDestination))
                .find("e.conf:4: read_default_file is not supported"),
            std::string::npos);
  // RelStorage connects to the server a replica file lists: refused. Read replicas only
  // move reads, and relstore reads from the primary: a warning.
  EXPECT_NE(config_error("<relstorage source>\n replica-conf /etc/replicas.conf\n<postgresql>\n"
                         " dsn dbname=z\n</postgresql>\n</relstorage>\n" +
                         std::string(kFileDestination))
                .find("e.conf:2: replica-conf is not supported"),
            std::string::npos);
  const auto ro = zodbconvert_config_from_text(
      "<relstorage source>\n ro-replica-conf /etc/replicas.conf\n<postgresql>\n dsn dbname=z\n"
      "</postgresql>\n</relstorage>\n" +
          std::string(kFileDestination),
      "r.conf");
  ASSERT_EQ(ro.warnings.size(), 1u);
  EXPECT_NE(ro.warnings[0].find("r.conf:2: option 'ro-replica-conf'"), std::string::npos);
  // libpq's hostaddr is its own parameter, not the host.
  const auto pg = uri_from_libpq_dsn("hostaddr=127.0.0.1 host=db.example dbname=z");
  EXPECT_EQ(pg.host, "db.example");
  EXPECT_EQ(pg.params.at("hostaddr"), "127.0.0.1");
  // ZODB's FileStorage empties the file when create is true.
  EXPECT_NE(config_error("<filestorage source>\n path /tmp/x.fs\n create true\n</filestorage>\n"
                         "<filestorage destination>\n path /tmp/y.fs\n</filestorage>\n")
                .find("e.conf:3: create true would empty the Data.fs"),
            std::string::npos);
}

// ZConfig's existing-dirpath (FileStorage's path and blob-dir, SQLite's data-dir): "~" is
// the home directory, and the directory holding the path must exist.
TEST(Zodbconvert, PathsExpandTheHomeDirectoryAndNeedTheirParent) {
  testing::TempDir home;
  const char* old_home = std::getenv("HOME");
  const std::string saved = old_home ? old_home : "";
  ::setenv("HOME", home.str().c_str(), 1);
  const auto c = zodbconvert_config_from_text(
      "<filestorage source>\n path ~/Data.fs\n blob-dir ~/blobs\n</filestorage>\n"
      "<relstorage destination>\n<sqlite3>\n data-dir ~/db\n</sqlite3>\n</relstorage>\n",
      "h.conf");
  EXPECT_EQ(c.source.uri.database, home.sub("Data.fs"));
  EXPECT_EQ(c.source.blob_dir, home.sub("blobs"));
  EXPECT_EQ(c.destination.uri.database, home.sub("db"));
  const std::string missing =
      config_error("<filestorage source>\n path ~/no/such/Data.fs\n</filestorage>\n" +
                   std::string(kFileDestination));
  EXPECT_NE(missing.find("e.conf:2: path " + home.sub("no/such/Data.fs") + ": the directory " +
                         home.sub("no/such") + " does not exist"),
            std::string::npos)
      << missing;
  if (old_home) ::setenv("HOME", saved.c_str(), 1);
}

// Errors from inside a value name the file and the key's line.
TEST(Zodbconvert, ValueErrorsNameTheKeysLine) {
  const auto source = [](const std::string& body) {
    return config_error("<relstorage source>\n" + body + "</relstorage>\n" +
                        std::string(kFileDestination));
  };
  EXPECT_NE(source("<postgresql>\n dsn dbname='z\n</postgresql>\n")
                .find("e.conf:3: malformed PostgreSQL dsn: unclosed quote"),
            std::string::npos);
  // An unquoted value with a space: refused (as libpq does), the words not shown.
  const std::string spaced =
      source("<postgresql>\n dsn dbname=z password=correct horse host=db\n</postgresql>\n");
  EXPECT_NE(spaced.find("e.conf:3: malformed PostgreSQL dsn: a key without '='"), std::string::npos)
      << spaced;
  EXPECT_EQ(spaced.find("horse"), std::string::npos) << spaced;
  EXPECT_EQ(spaced.find("correct"), std::string::npos) << spaced;
  EXPECT_NE(source(" commit-lock-timeout 30s\n<sqlite3>\n data-dir /tmp/d\n</sqlite3>\n")
                .find("e.conf:2: commit-lock-timeout '30s' is not a whole number"),
            std::string::npos);
  EXPECT_NE(source("<mysql>\n user z\n</mysql>\n").find("e.conf:2: <mysql> needs db"),
            std::string::npos);
  const auto sized = zodbconvert_config_from_text(
      "<relstorage source>\n<sqlite3>\n data-dir /tmp/d\n<pragmas>\n cache_size 10 MB\n"
      "</pragmas>\n</sqlite3>\n</relstorage>\n" +
          std::string(kFileDestination),
      "z.conf");
  EXPECT_EQ(sized.source.uri.params.at("pragma.cache_size"), "-10240");
}

}  // namespace
}  // namespace relstore
