#include "config/zodbconvert.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

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
  const std::string digits = value.substr(0, value.size() - unit.size());
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (scale == 0 || digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
    throw ConfigError(where + ": " + key + " '" + value +
                      "' is not a size (a number, or one with KB, MB or GB)");
  }
  const uint64_t bytes = n * scale;
  return key == "cache_size" ? "-" + std::to_string(bytes / 1024) : std::to_string(bytes);
}

std::string where(const std::string& filename, const ZConfigSection& s) {
  return filename + ":" + std::to_string(s.line);
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

// Keys each section understands; anything else is reported and ignored, as ZConfig schemas
// for RelStorage define many tuning options that do not apply here.
void warn_unknown(const ZConfigSection& s, std::initializer_list<std::string_view> known,
                  const std::string& filename, std::vector<std::string>& warnings) {
  for (const auto& [key, value] : s.keys) {
    bool ok = false;
    for (auto k : known) ok = ok || key == k;
    if (!ok) {
      warnings.push_back(where(filename, s) + ": option '" + key + "' of <" + s.type +
                         "> is ignored");
    }
  }
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

void set_history(StorageUri& uri, const ZConfigSection& relstorage, const std::string& filename) {
  // RelStorage's keep-history defaults to true; say so explicitly so that an existing
  // database of the other mode is an error rather than silently accepted.
  const auto keep = relstorage.get("keep-history");
  const bool hp = !keep || zconfig_boolean(*keep, "keep-history", where(filename, relstorage));
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
    } else if (key == "host" || key == "hostaddr") {
      uri.host = value;
    } else if (key == "port") {
      uri.port = parse_port(value, "malformed PostgreSQL dsn");
    } else {
      uri.params[key] = value;
    }
  }
  return uri;
}

StorageEndpoint endpoint_from_section(const ZConfigSection& s, const std::string& filename,
                                      std::vector<std::string>& warnings) {
  StorageEndpoint out;
  if (s.type == "filestorage") {
    warn_unknown(s, {"path", "blob-dir", "read-only"}, filename, warnings);
    const auto path = s.get("path");
    if (!path) throw ConfigError(where(filename, s) + ": <filestorage> needs a path");
    out.uri.scheme = Scheme::file;
    out.uri.database = *path;
    out.blob_dir = s.get("blob-dir").value_or("");
    return out;
  }
  if (s.type != "relstorage") {
    throw ConfigError(where(filename, s) + ": unsupported storage section <" + s.type +
                      ">; expected <filestorage> or <relstorage>");
  }
  warn_unknown(
      s,
      {"keep-history", "blob-dir", "shared-blob-dir", "read-only", "commit-lock-timeout", "name"},
      filename, warnings);
  out.blob_dir = s.get("blob-dir").value_or("");
  // With shared-blob-dir false (RelStorage's default is true) blob-dir is only a cache of
  // blobs kept in the database; it is no blob store to copy from or into.
  if (const auto shared = s.get("shared-blob-dir");
      shared && !zconfig_boolean(*shared, "shared-blob-dir", where(filename, s)) &&
      !out.blob_dir.empty()) {
    warnings.push_back(where(filename, s) + ": blob-dir " + out.blob_dir +
                       " is a blob cache (shared-blob-dir false), not used; the blobs are in "
                       "the database's blob_chunk table, which relstore does not read");
    out.blob_dir.clear();
  }
  int adapters = 0;
  for (const auto& child : s.sections) {
    if (child.type == "postgresql") {
      warn_unknown(child, {"dsn", "driver"}, filename, warnings);
      out.uri = uri_from_libpq_dsn(child.get("dsn").value_or(""));
    } else if (child.type == "mysql") {
      warn_unknown(child,
                   {"host", "port", "user", "passwd", "db", "unix_socket", "driver",
                    "connect_timeout", "compress"},
                   filename, warnings);
      out.uri.scheme = Scheme::mysql;
      out.uri.host = child.get("host").value_or("localhost");
      const auto port = child.get("port");
      if (port) out.uri.port = parse_port(*port, where(filename, child));
      out.uri.user = child.get("user").value_or("");
      out.uri.password = child.get("passwd").value_or("");
      out.uri.database = child.get("db").value_or("");
      // MySQLdb's connect() arguments that RelStorage passes on, and the driver knows.
      for (const char* key : {"unix_socket", "connect_timeout", "compress"}) {
        if (auto v = child.get(key)) out.uri.params[key] = *v;
      }
      // MySQLdb (so RelStorage) reaches "localhost", or no host at all, through the client
      // library's Unix socket, where an account such as root@localhost with unix_socket
      // authentication is; the connector we use would go through TCP to port 3306. A
      // port says TCP is meant, so it keeps TCP (libmysqlclient would quietly ignore it).
      if (!out.uri.params.count("unix_socket") && out.uri.host == "localhost" && !port) {
        if (auto socket = default_mysql_socket()) out.uri.params["unix_socket"] = *socket;
      }
    } else if (child.type == "sqlite3") {
      warn_unknown(child, {"data-dir", "driver", "gevent_yield_interval"}, filename, warnings);
      const auto dir = child.get("data-dir");
      if (!dir) throw ConfigError(where(filename, child) + ": <sqlite3> needs a data-dir");
      out.uri.scheme = Scheme::sqlite;
      out.uri.database = *dir;
      if (const ZConfigSection* pragmas = child.child("pragmas")) {
        for (const auto& [k, v] : pragmas->keys) {
          out.uri.params["pragma." + k] = pragma_value(k, v, where(filename, *pragmas));
        }
      }
    } else {
      warnings.push_back(where(filename, child) + ": section <" + child.type +
                         "> inside <relstorage> is ignored");
      continue;
    }
    ++adapters;
  }
  if (adapters != 1) {
    throw ConfigError(where(filename, s) +
                      ": <relstorage> needs exactly one of <postgresql>, <mysql>, <sqlite3>");
  }
  set_history(out.uri, s, filename);
  if (auto t = s.get("commit-lock-timeout")) out.uri.params["commit_lock_timeout"] = *t;
  return out;
}

ZodbconvertConfig zodbconvert_config_from_text(std::string_view text, const std::string& filename) {
  const ZConfigFile file = parse_zconfig(text, filename);
  ZodbconvertConfig out;
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
      ro && zconfig_boolean(*ro, "read-only", where(filename, *destination))) {
    throw ConfigError(where(filename, *destination) +
                      ": the destination is marked read-only; a conversion writes to it");
  }
  return out;
}

ZodbconvertConfig read_zodbconvert_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError("cannot read the configuration file " + path);
  std::stringstream text;
  text << in.rdbuf();
  return zodbconvert_config_from_text(text.str(), path);
}

}  // namespace relstore
