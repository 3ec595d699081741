#include "config/zodbconvert.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "backend/registry.h"
#include "option_values.h"
#include "relstore/errors.h"

namespace relstore {
namespace {

// RelStorage declares some <pragmas> keys as ZConfig byte sizes ("100MB"). A size with a
// unit becomes what SQLite expects: cache_size in KiB, as a negative number (SQLite's way
// to give it in KiB rather than pages), the others in bytes. Plain numbers go through as
// SQLite reads them.
std::string pragma_value(const std::string& key, const std::string& value,
                         const std::string& where) {
  static const char* const kByteSizes[] = {"cache_size", "mmap_size", "page_size",
                                           "soft_heap_limit"};
  if (std::find(std::begin(kByteSizes), std::end(kByteSizes), key) == std::end(kByteSizes)) {
    return value;
  }
  std::string unit;
  for (size_t i = value.size(); i > 0 && std::isalpha(static_cast<unsigned char>(value[i - 1]));
       --i) {
    unit.insert(unit.begin(),
                static_cast<char>(std::toupper(static_cast<unsigned char>(value[i - 1]))));
  }
  if (unit.empty()) return value;
  const uint64_t scale = unit == "KB"   ? 1024
                         : unit == "MB" ? 1024 * 1024
                         : unit == "GB" ? 1024 * 1024 * 1024
                                        : 0;
  // ZConfig reads "10 MB" as well as "10MB".
  std::string digits = value.substr(0, value.size() - unit.size());
  while (!digits.empty() && std::isspace(static_cast<unsigned char>(digits.back()))) {
    digits.pop_back();
  }
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (scale == 0 || digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
    throw ConfigError(where + ": " + key + " '" + value +
                      "' is not a size (a number, or one with KB, MB or GB)");
  }
  // SQLite reads the pragma as a signed 64-bit number.
  if (n > static_cast<uint64_t>(INT64_MAX) / scale) {
    throw ConfigError(where + ": " + key + " '" + value + "' is too large");
  }
  const uint64_t bytes = n * scale;
  return key == "cache_size" ? "-" + std::to_string(bytes / 1024) : std::to_string(bytes);
}

std::string where(const std::string& filename, const ZConfigSection& s) {
  return (s.file.empty() ? filename : s.file) + ":" + std::to_string(s.line);
}

// A ZConfig boolean: yes/true/on or no/false/off in any case; anything else is an error
// (a misspelt "ture" must not quietly turn history off).
bool zconfig_boolean(const std::string& value, const std::string& key, const std::string& place) {
  std::string v = value;
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "yes" || v == "true" || v == "on") return true;
  if (v == "no" || v == "false" || v == "off") return false;
  throw ConfigError(place + ": " + key + " '" + value +
                    "' is not a boolean (yes/true/on or no/false/off)");
}

// A key as messages may show it: one written "passwd=secret" (no space) is a single key,
// and only its name is shown.
std::string shown_key(const std::string& key) {
  const size_t eq = key.find('=');
  return eq == std::string::npos ? key : key.substr(0, eq) + "=…";
}

// The keys of a section: `used` are read by relstore; `ignored` are ZODB's or RelStorage's
// own keys that do not apply to a conversion (cache and pack tuning), reported and skipped.
// Any other key is an error, as ZConfig makes it: a misspelt `keep_history` must not
// quietly leave a destination keeping history.
void check_keys(const ZConfigSection& s, std::initializer_list<std::string_view> used,
                std::initializer_list<std::string_view> ignored,
                std::vector<std::string>& warnings) {
  const auto in = [](std::initializer_list<std::string_view> list, const std::string& key) {
    return std::find(list.begin(), list.end(), key) != list.end();
  };
  for (const auto& [key, value] : s.keys) {
    if (in(used, key)) continue;
    if (in(ignored, key)) {
      warnings.push_back(s.where(key) + ": option '" + key + "' of <" + s.type +
                         "> is ignored (it does not apply to a conversion)");
      continue;
    }
    throw ConfigError(s.where(key) + ": '" + shown_key(key) + "' is not an option of <" + s.type +
                      "> (ZODB and RelStorage define no such key)");
  }
}

// Sections inside `s` other than `allowed` are errors: ZConfig's schemas define none there,
// and their keys would be ignored.
void check_sections(const ZConfigSection& s, std::string_view allowed = {}) {
  for (const auto& child : s.sections) {
    if (child.type != allowed) {
      throw ConfigError(child.file + ":" + std::to_string(child.line) + ": <" + child.type +
                        "> is not a section of <" + s.type + ">");
    }
  }
}

// ZConfig's existing-dirpath, the datatype of FileStorage's path and blob-dir and of
// RelStorage's SQLite data-dir: a leading "~" or "~user" is expanded and the directory
// holding the path must exist.
std::string existing_dirpath(const ZConfigSection& s, const std::string& key) {
  std::string value = *s.get(key);
  if (value.starts_with('~')) {
    const size_t slash = value.find('/');
    const std::string user = value.substr(1, slash == std::string::npos ? value.npos : slash - 1);
    const char* home = nullptr;
    if (user.empty()) {
      home = std::getenv("HOME");
      if (!home || !*home) {
        if (const passwd* pw = getpwuid(getuid())) home = pw->pw_dir;
      }
    } else if (const passwd* pw = getpwnam(user.c_str())) {
      home = pw->pw_dir;
    }
    if (!home) {
      throw ConfigError(s.where(key) + ": " + key + " " + value + ": cannot expand '~" + user +
                        "' (no such user or no HOME)");
    }
    value = std::string(home) + (slash == std::string::npos ? "" : value.substr(slash));
  }
  const std::filesystem::path parent = std::filesystem::path(value).parent_path();
  std::error_code ec;
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
    throw ConfigError(s.where(key) + ": " + key + " " + value + ": the directory " +
                      parent.string() + " does not exist");
  }
  return value;
}

// A ZConfig integer key, for a message at its line rather than a later one with no place.
std::string zconfig_integer(const ZConfigSection& s, const std::string& key) {
  const std::string value = *s.get(key);
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size()) {
    throw ConfigError(s.where(key) + ": " + key + " '" + value +
                      "' is not a whole number of seconds");
  }
  return value;
}

// Where libmysqlclient looks for the local server: $MYSQL_UNIX_PORT, else the socket
// Debian's MariaDB and MySQL packages use (the client library's default here). None when
// that file does not exist: then TCP to localhost, as before, rather than a socket that
// another system keeps elsewhere (/var/lib/mysql/mysql.sock, /tmp/mysql.sock).
std::optional<std::string> default_mysql_socket() {
  const char* env = std::getenv("MYSQL_UNIX_PORT");
  const std::string path = env && *env ? env : "/run/mysqld/mysqld.sock";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  return path;
}

void set_history(StorageUri& uri, const ZConfigSection& relstorage) {
  // RelStorage's keep-history defaults to true; say so explicitly so that an existing
  // database of the other mode is an error rather than silently accepted.
  const auto keep = relstorage.get("keep-history");
  const bool hp = !keep || zconfig_boolean(*keep, "keep-history", relstorage.where("keep-history"));
  uri.params["history"] = hp ? "preserving" : "free";
}

}  // namespace

StorageUri uri_from_libpq_dsn(const std::string& dsn) {
  if (dsn.rfind("postgresql://", 0) == 0 || dsn.rfind("postgres://", 0) == 0) {
    return StorageUri::parse(dsn);
  }
  StorageUri uri;
  uri.scheme = Scheme::postgresql;
  size_t i = 0;
  while (i < dsn.size()) {
    while (i < dsn.size() && std::isspace(static_cast<unsigned char>(dsn[i]))) ++i;
    if (i >= dsn.size()) break;
    const size_t eq = dsn.find('=', i);
    if (eq == std::string::npos) {
      throw ConfigError("malformed PostgreSQL dsn: expected key=value");
    }
    std::string key = dsn.substr(i, eq - i);
    while (!key.empty() && std::isspace(static_cast<unsigned char>(key.back()))) key.pop_back();
    // "password=correct horse" would make "horse host" a key: refused as libpq does, and
    // without echoing the words, which may be part of a password.
    if (key.empty() ||
        std::any_of(key.begin(), key.end(), [](unsigned char c) { return std::isspace(c) != 0; })) {
      throw ConfigError(
          "malformed PostgreSQL dsn: a key without '=' (quote a value that "
          "holds spaces: key='a b')");
    }
    i = eq + 1;
    while (i < dsn.size() && std::isspace(static_cast<unsigned char>(dsn[i]))) ++i;
    std::string value;
    if (i < dsn.size() && dsn[i] == '\'') {
      ++i;
      while (i < dsn.size() && dsn[i] != '\'') {
        if (dsn[i] == '\\' && i + 1 < dsn.size()) ++i;
        value += dsn[i++];
      }
      if (i >= dsn.size()) throw ConfigError("malformed PostgreSQL dsn: unclosed quote");
      ++i;
    } else {
      while (i < dsn.size() && !std::isspace(static_cast<unsigned char>(dsn[i]))) {
        if (dsn[i] == '\\' && i + 1 < dsn.size()) ++i;
        value += dsn[i++];
      }
    }
    if (key == "dbname") {
      uri.database = value;
    } else if (key == "user") {
      uri.user = value;
    } else if (key == "password") {
      uri.password = value;
    } else if ((key == "host" || key == "port") && value.find(',') != std::string::npos) {
      uri.params[key] = value;  // libpq's lists of hosts and ports, failover in order
    } else if (key == "host") {
      uri.host = value;
    } else if (key == "port") {
      uri.port = parse_port(value, "malformed PostgreSQL dsn");
    } else {
      uri.params[key] = value;
    }
  }
  return uri;
}

namespace {

StorageUri postgresql_uri(const ZConfigSection& s, std::vector<std::string>& warnings) {
  check_keys(s, {"dsn"}, {"driver"}, warnings);
  check_sections(s);
  try {
    StorageUri uri = uri_from_libpq_dsn(s.get("dsn").value_or(""));
    backend::check_driver_options(uri);  // a misspelt key, on the dsn's line
    return uri;
  } catch (const ConfigError& e) {
    throw ConfigError(s.where("dsn") + ": " + e.what());
  }
}

StorageUri mysql_uri(const ZConfigSection& s, std::vector<std::string>& warnings) {
  check_keys(s,
             {"host", "port", "user", "passwd", "db", "unix_socket", "connect_timeout", "compress",
              "read_default_file", "read_default_group"},
             {"driver", "named_pipe"}, warnings);
  check_sections(s);
  // MySQLdb reads host, user and password from these files, where they may name another
  // server than the one relstore would reach without them.
  for (const char* key : {"read_default_file", "read_default_group"}) {
    if (s.get(key)) {
      throw ConfigError(s.where(key) + ": " + key +
                        " is not supported: write host, port, user, passwd and db in the "
                        "<mysql> section");
    }
  }
  StorageUri uri;
  uri.scheme = Scheme::mysql;
  uri.host = s.get("host").value_or("localhost");
  const auto port = s.get("port");
  if (port) uri.port = parse_port(*port, s.where("port"));
  uri.user = s.get("user").value_or("");
  uri.password = s.get("passwd").value_or("");
  uri.database = s.get("db").value_or("");
  if (uri.database.empty()) {
    throw ConfigError(where("", s) + ": <mysql> needs db (the database to use)");
  }
  // MySQLdb's connect() arguments that RelStorage passes on, and the driver knows.
  for (const char* key : {"unix_socket", "connect_timeout", "compress"}) {
    if (auto v = s.get(key)) uri.params[key] = *v;
  }
  // libmysqlclient (so MySQLdb and RelStorage) uses the socket only for "localhost" or no
  // host; a host named otherwise is reached over TCP and the socket goes unused.
  if (uri.params.count("unix_socket") && uri.host != "localhost") {
    warnings.push_back(s.where("unix_socket") + ": unix_socket is not used: host " + uri.host +
                       " is reached over TCP, as MySQLdb does");
    uri.params.erase("unix_socket");
  }
  // MySQLdb (so RelStorage) reaches "localhost", or no host at all, through the client
  // library's Unix socket, where an account such as root@localhost with unix_socket
  // authentication is; the connector we use would go through TCP to port 3306. A
  // port says TCP is meant, so it keeps TCP (libmysqlclient would quietly ignore it).
  if (!uri.params.count("unix_socket") && uri.host == "localhost" && !port) {
    if (auto socket = default_mysql_socket()) uri.params["unix_socket"] = *socket;
  }
  return uri;
}

StorageUri sqlite_uri(const ZConfigSection& s, const std::string& filename,
                      std::vector<std::string>& warnings) {
  check_keys(s, {"data-dir"}, {"driver", "gevent_yield_interval"}, warnings);
  check_sections(s, "pragmas");
  if (!s.get("data-dir")) throw ConfigError(where(filename, s) + ": <sqlite3> needs a data-dir");
  StorageUri uri;
  uri.scheme = Scheme::sqlite;
  uri.database = existing_dirpath(s, "data-dir");
  if (const ZConfigSection* pragmas = s.child("pragmas")) {
    for (const auto& [k, v] : pragmas->keys) {
      // RelStorage drops it: the wait for locks is commit-lock-timeout.
      if (k == "busy_timeout") {
        warnings.push_back(pragmas->where(k) +
                           ": pragma busy_timeout is ignored, as RelStorage ignores it: "
                           "commit-lock-timeout sets how long SQLite waits for locks");
        continue;
      }
      const std::string value = pragma_value(k, v, pragmas->where(k));
      if (const std::string problem = sqlite_pragma_problem(k, value); !problem.empty()) {
        throw ConfigError(pragmas->where(k) + ": pragma " + k + ": " + problem);
      }
      uri.params["pragma." + k] = value;
    }
  }
  return uri;
}

StorageEndpoint filestorage_endpoint(const ZConfigSection& s, const std::string& filename,
                                     std::vector<std::string>& warnings) {
  check_keys(s, {"path", "blob-dir", "read-only", "create"},
             {"name", "quota", "packer", "pack-gc", "pack-keep-old"}, warnings);
  check_sections(s);
  // ZODB's FileStorage truncates the file when `create` is true; relstore empties a
  // destination only when asked on the command line.
  if (const auto create = s.get("create");
      create && zconfig_boolean(*create, "create", s.where("create"))) {
    throw ConfigError(s.where("create") +
                      ": create true would empty the Data.fs; relstore convert does that only "
                      "with --clear (and never to a source)");
  }
  if (!s.get("path")) throw ConfigError(where(filename, s) + ": <filestorage> needs a path");
  StorageEndpoint out;
  out.uri.scheme = Scheme::file;
  out.uri.database = existing_dirpath(s, "path");
  if (s.get("blob-dir")) out.blob_dir = existing_dirpath(s, "blob-dir");
  return out;
}

}  // namespace

StorageEndpoint endpoint_from_section(const ZConfigSection& s, const std::string& filename,
                                      std::vector<std::string>& warnings) {
  if (s.type == "filestorage") return filestorage_endpoint(s, filename, warnings);
  if (s.type != "relstorage") {
    throw ConfigError(where(filename, s) + ": unsupported storage section <" + s.type +
                      ">; expected <filestorage> or <relstorage>");
  }
  check_keys(s,
             {"keep-history", "blob-dir", "shared-blob-dir", "read-only", "commit-lock-timeout",
              "create-schema", "name", "replica-conf"},
             {"blob-cache-size",
              "blob-cache-size-check",
              "blob-cache-size-check-external",
              "blob-chunk-size",
              "ro-replica-conf",
              "replica-timeout",
              "revert_when_stale",
              "poll-interval",
              "pack-gc",
              "pack-prepack-only",
              "pack-skip-prepack",
              "pack-batch-timeout",
              "pack-commit-busy-delay",
              "cache-servers",
              "cache-module-name",
              "cache-prefix",
              "cache-local-mb",
              "cache-local-storage",
              "cache-local-dir",
              "cache-local-dir-count",
              "cache-local-dir-read-count",
              "cache-local-dir-compress",
              "cache-local-dir-write-max-size",
              "cache-local-object-max",
              "cache-local-compression",
              "cache-delta-size-limit",
              "commit-lock-id"},
             warnings);
  // RelStorage connects to the first server its replica file lists, in place of the host
  // of the dsn or <mysql> section, which relstore would reach instead. (ro-replica-conf only
  // moves reads to replicas; reading from the primary gives the same data.)
  if (s.get("replica-conf")) {
    throw ConfigError(s.where("replica-conf") +
                      ": replica-conf is not supported: RelStorage would connect to the "
                      "server its file lists; write that server's host and port in the "
                      "adapter's section");
  }
  StorageEndpoint out;
  out.blob_dir = s.get("blob-dir").value_or("");
  // RelStorage 3 and later default shared-blob-dir to false: blob-dir is then only a cache
  // of blobs kept in the database, no blob store to copy from or into.
  const auto shared = s.get("shared-blob-dir");
  if (!out.blob_dir.empty() &&
      !(shared && zconfig_boolean(*shared, "shared-blob-dir", s.where("shared-blob-dir")))) {
    warnings.push_back(s.where("blob-dir") + ": blob-dir " + out.blob_dir +
                       " is a blob cache (shared-blob-dir is false, RelStorage's default), "
                       "not used: the blobs are copied through the database's blob_chunk "
                       "table");
    out.blob_dir.clear();
  }
  int adapters = 0;
  for (const auto& child : s.sections) {
    if (child.type == "postgresql") {
      out.uri = postgresql_uri(child, warnings);
    } else if (child.type == "mysql") {
      out.uri = mysql_uri(child, warnings);
    } else if (child.type == "sqlite3") {
      out.uri = sqlite_uri(child, filename, warnings);
    } else {
      throw ConfigError(where(filename, child) + ": <" + child.type +
                        "> is not a RelStorage adapter; expected <postgresql>, <mysql> or "
                        "<sqlite3>");
    }
    ++adapters;
  }
  if (adapters != 1) {
    throw ConfigError(where(filename, s) +
                      ": <relstorage> needs exactly one of <postgresql>, <mysql>, <sqlite3>");
  }
  set_history(out.uri, s);
  if (s.get("commit-lock-timeout")) {
    out.uri.params["commit_lock_timeout"] = zconfig_integer(s, "commit-lock-timeout");
  }
  // RelStorage's create-schema false: use the database as it is, never create or upgrade.
  if (const auto create = s.get("create-schema");
      create && !zconfig_boolean(*create, "create-schema", s.where("create-schema"))) {
    out.uri.params["create"] = "false";
  }
  return out;
}

ZodbconvertConfig zodbconvert_config_from_text(std::string_view text, const std::string& filename) {
  const ZConfigFile file = parse_zconfig(text, filename);
  ZodbconvertConfig out;
  // zodbconvert's schema has no keys outside its two storage sections.
  if (!file.root.keys.empty()) {
    const std::string& key = file.root.keys.front().first;
    throw ConfigError(file.root.where(key) + ": '" + shown_key(key) +
                      "' is outside any section; zodbconvert's keys go in the source or "
                      "destination section");
  }
  for (const auto& imp : file.imports) {
    if (imp != "relstorage") {
      out.warnings.push_back(filename + ": %import " + imp + " is ignored");
    }
  }
  const ZConfigSection* source = nullptr;
  const ZConfigSection* destination = nullptr;
  for (const auto& s : file.root.sections) {
    if (s.name == "source" || s.name == "destination") {
      const ZConfigSection*& slot = s.name == "source" ? source : destination;
      if (slot) {
        throw ConfigError(where(filename, s) + ": a second storage section named '" + s.name +
                          "' (the first is at line " + std::to_string(slot->line) + ")");
      }
      slot = &s;
    } else {
      out.warnings.push_back(where(filename, s) + ": section <" + s.type + " " + s.name +
                             "> is neither source nor destination; ignored");
    }
  }
  if (!source || !destination) {
    throw ConfigError(filename +
                      ": needs a storage section named 'source' and one named "
                      "'destination' (e.g. <filestorage source>)");
  }
  out.source = endpoint_from_section(*source, filename, out.warnings);
  out.destination = endpoint_from_section(*destination, filename, out.warnings);
  // The source is always opened read-only; a destination marked read-only cannot be
  // written, and writing it anyway would ignore what the file says.
  if (const auto ro = destination->get("read-only");
      ro && zconfig_boolean(*ro, "read-only", destination->where("read-only"))) {
    throw ConfigError(destination->where("read-only") +
                      ": the destination is marked read-only; a conversion writes to it");
  }
  return out;
}

ZodbconvertConfig read_zodbconvert_config(const std::string& path) {
  // An ifstream opens a directory without complaint and reads nothing from it.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ConfigError("the configuration file " + path + " is a directory");
  }
  std::ifstream in(path);
  if (!in) throw ConfigError("cannot read the configuration file " + path);
  std::stringstream text;
  text << in.rdbuf();
  return zodbconvert_config_from_text(text.str(), path);
}

}  // namespace relstore
