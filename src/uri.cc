#include "relstore/uri.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "option_values.h"
#include "relstore/errors.h"

namespace relstore {
namespace {

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool is_secret_key(std::string_view key) {
  return key == "password" || key == "passwd" || key == "sslpassword";
}

std::string percent_decode(std::string_view s, std::string_view what) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size() || !std::isxdigit(static_cast<unsigned char>(s[i + 1])) ||
        !std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      throw ConfigError("malformed URI: bad percent escape in the " + std::string(what));
    }
    out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
    i += 2;
  }
  return out;
}

// Encodes everything but unreserved characters; '/' only when `keep_slash` (paths).
std::string percent_encode(std::string_view s, bool keep_slash = false) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

void parse_query(std::string_view q, std::map<std::string, std::string>& params) {
  while (!q.empty()) {
    const size_t amp = q.find('&');
    const std::string_view item = q.substr(0, amp);
    q = amp == std::string_view::npos ? std::string_view() : q.substr(amp + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string key = percent_decode(item.substr(0, eq), "query");
    if (key.empty()) throw ConfigError("malformed URI: a query parameter has no name");
    // A key given twice would be settled by whichever came last: "?history=preserving&
    // history=free" made a history-free copy without a word. Refused, as the config-file
    // reader refuses a key given twice.
    const bool added = params
                           .emplace(key, eq == std::string_view::npos
                                             ? ""
                                             : percent_decode(item.substr(eq + 1), "query"))
                           .second;
    if (!added) throw ConfigError("URI option " + key + " is given twice");
  }
}

// Splits "user:pw@host:port" (host may be an IPv6 literal in brackets) into its parts.
// A password (or user name) holding an unescaped '/', '?' or '#' ends the authority early,
// and what follows would be parsed as port, database or query — and quoted in errors.
// `rest` is what follows "scheme:"; an '@' in the segment right after the authority
// betrays it. The message names no part of the credentials.
void check_credentials_end(std::string_view rest, const std::string& scheme) {
  if (!rest.starts_with("//")) return;
  const size_t auth_end = rest.find_first_of("/?#", 2);
  if (auth_end == std::string_view::npos) return;
  if (rest.substr(2, auth_end - 2).find('@') != std::string_view::npos) return;
  const size_t next = rest.find_first_of("/?#", auth_end + 1);
  if (rest.substr(auth_end + 1, next - (auth_end + 1)).find('@') == std::string_view::npos) return;
  throw ConfigError("malformed " + scheme +
                    " URI: an '@' follows the host part, so the user name or password holds a "
                    "'/', '?' or '#'; percent-encode them (%2F, %3F, %23)");
}

// A list of hosts given with a host or port option as well: the list would overwrite the
// option without a word. Refused, as an option given twice is (a single address given
// again as an option is refused where the connection is made, adapters/postgresql).
void refuse_given_twice(const StorageUri& uri, const char* key) {
  if (uri.params.count(key)) {
    throw ConfigError(std::string("malformed URI: the ") + key +
                      " is given in the address and again as ?" + key + "=");
  }
}

void parse_authority(std::string_view auth, StorageUri& uri) {
  const size_t at = auth.rfind('@');
  if (at != std::string_view::npos) {
    const std::string_view cred = auth.substr(0, at);
    const size_t colon = cred.find(':');
    uri.user = percent_decode(cred.substr(0, colon), "user name");
    if (colon != std::string_view::npos) {
      uri.password = percent_decode(cred.substr(colon + 1), "password");
    }
    auth = auth.substr(at + 1);
  }
  // libpq's list of hosts, "h1:5432,h2:5433" (failover to the next, design §9): given to
  // libpq as its host and port lists.
  if (uri.scheme == Scheme::postgresql && auth.find(',') != std::string_view::npos) {
    std::string hosts, ports;
    for (size_t start = 0; start <= auth.size();) {
      size_t end = auth.find(',', start);
      if (end == std::string_view::npos) end = auth.size();
      StorageUri one;
      parse_authority(auth.substr(start, end - start), one);
      if (one.host.empty()) throw ConfigError("malformed URI: an empty host in a list of hosts");
      hosts += (start ? "," : "") + one.host;
      ports += (start ? "," : "") + (one.port ? std::to_string(*one.port) : std::string());
      start = end + 1;
    }
    refuse_given_twice(uri, "host");
    refuse_given_twice(uri, "port");
    uri.params["host"] = hosts;
    if (ports.find_first_not_of(',') != std::string::npos) uri.params["port"] = ports;
    return;
  }
  std::string_view port;
  if (!auth.empty() && auth.front() == '[') {
    const size_t close = auth.find(']');
    if (close == std::string_view::npos) throw ConfigError("malformed URI: unclosed '[' in host");
    uri.host = std::string(auth.substr(1, close - 1));
    auth = auth.substr(close + 1);
    if (!auth.empty() && auth.front() != ':') throw ConfigError("malformed URI: junk after ']'");
    if (!auth.empty()) port = auth.substr(1);
  } else {
    const size_t colon = auth.rfind(':');
    uri.host = percent_decode(auth.substr(0, colon), "host");
    if (colon != std::string_view::npos)
      port = auth.substr(colon + 1);
    else
      auth = {};
  }
  if (!auth.empty()) uri.port = parse_port(port, "malformed URI");
}

}  // namespace

bool parse_bool(const std::string& key, const std::string& value) {
  const std::string v = lowercase(value);
  if (v == "1" || v == "true" || v == "on" || v == "yes" || v.empty()) return true;
  if (v == "0" || v == "false" || v == "off" || v == "no") return false;
  throw ConfigError("option " + key + ": expected true/false, got '" + value + "'");
}

double parse_number(const std::string& key, const std::string& v) {
  double out = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  // from_chars reads "inf" and "nan" too; as a timeout either would end up as no wait.
  if (ec != std::errc() || ptr != v.data() + v.size() || !(out >= 0) || !std::isfinite(out)) {
    throw ConfigError("option " + key + ": expected a non-negative number, got '" + v + "'");
  }
  return out;
}

uint64_t parse_byte_size(const std::string& key, const std::string& v) {
  // ZConfig's byte-size, as RelStorage's options take it: a whole number with an optional
  // KB, MB, GB or TB (powers of 1024, any case, a space allowed before it).
  uint64_t n = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  std::string unit = lowercase(std::string(ptr, v.data() + v.size()));
  if (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  int shift = -1;
  if (unit.empty()) shift = 0;
  if (unit == "kb") shift = 10;
  if (unit == "mb") shift = 20;
  if (unit == "gb") shift = 30;
  if (unit == "tb") shift = 40;
  if (ec != std::errc() || ptr == v.data() || shift < 0 ||
      n > (std::numeric_limits<uint64_t>::max() >> shift)) {
    throw ConfigError("option " + key +
                      ": expected a size in bytes such as 1073741824 or 10GB, got '" + v + "'");
  }
  return n << shift;
}

int parse_port(std::string_view port, const std::string& where) {
  int p = 0;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || p <= 0 ||
      p > 65535) {
    throw ConfigError(where + ": port '" + std::string(port) + "' is not a number 1-65535");
  }
  return p;
}

std::string render(const StorageUri& uri, bool redact);

const char* scheme_name(Scheme s) {
  switch (s) {
    case Scheme::sqlite:
      return "sqlite";
    case Scheme::postgresql:
      return "postgresql";
    case Scheme::mysql:
      return "mysql";
    case Scheme::file:
      return "file";
  }
  return "?";
}

StorageUri StorageUri::parse(std::string_view text) {
  StorageUri uri;
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    throw ConfigError("malformed URI '" + redact_secrets(text) +
                      "': expected scheme:…, one of sqlite:, postgresql://, mysql://, file:");
  }
  const std::string scheme = lowercase(std::string(text.substr(0, colon)));
  if (scheme == "sqlite" || scheme == "sqlite3") {
    uri.scheme = Scheme::sqlite;
  } else if (scheme == "postgresql" || scheme == "postgres") {
    uri.scheme = Scheme::postgresql;
  } else if (scheme == "mysql" || scheme == "mariadb") {
    uri.scheme = Scheme::mysql;
  } else if (scheme == "file") {
    uri.scheme = Scheme::file;
  } else {
    throw ConfigError("unknown URI scheme '" + scheme +
                      "': expected sqlite, postgresql, mysql or file");
  }

  std::string_view rest = text.substr(colon + 1);
  if (uri.scheme != Scheme::sqlite && uri.scheme != Scheme::file)
    check_credentials_end(rest, scheme);
  const size_t qmark = rest.find('?');
  if (qmark != std::string_view::npos) {
    parse_query(rest.substr(qmark + 1), uri.params);
    rest = rest.substr(0, qmark);
  }

  const bool has_authority = rest.substr(0, 2) == "//";
  if (has_authority) rest = rest.substr(2);
  if (uri.scheme == Scheme::sqlite || uri.scheme == Scheme::file) {
    // sqlite:///abs/dir and file:///abs/Data.fs carry an empty authority; sqlite:rel/dir
    // and file:rel/Data.fs are relative paths.
    if (has_authority) {
      const size_t slash = rest.find('/');
      const std::string_view auth = rest.substr(0, slash);
      if (!auth.empty() && auth != "localhost") {
        throw ConfigError("malformed URI '" + std::string(text) + "': a " + scheme +
                          " URI names a local path: use " + scheme + ":///absolute/path or " +
                          scheme + ":relative/path");
      }
      rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
    }
    uri.database = percent_decode(rest, "path");
    if (uri.database.empty())
      throw ConfigError("malformed URI '" + std::string(text) + "': no path");
    return uri;
  }

  if (!has_authority) {
    throw ConfigError("malformed URI '" + redact_secrets(text) + "': expected " + scheme +
                      "://user:password@host:port/database");
  }
  const size_t slash = rest.find('/');
  parse_authority(rest.substr(0, slash), uri);
  if (slash != std::string_view::npos)
    uri.database = percent_decode(rest.substr(slash + 1), "database");
  if (uri.database.find('/') != std::string::npos) {
    throw ConfigError("malformed URI '" + uri.redacted() + "': database name contains '/'");
  }
  return uri;
}

std::string StorageUri::redacted() const { return render(*this, true); }
std::string StorageUri::text() const { return render(*this, false); }

std::string render(const StorageUri& u, bool redact) {
  std::string out = scheme_name(u.scheme);
  out += ':';
  if (u.scheme == Scheme::sqlite || u.scheme == Scheme::file) {
    out += u.database.starts_with('/') ? "//" + percent_encode(u.database, true)
                                       : percent_encode(u.database, true);
  } else {
    out += "//";
    if (!u.user.empty() || !u.password.empty()) {
      out += percent_encode(u.user);
      if (!u.password.empty())
        out += ":" + (redact ? std::string("***") : percent_encode(u.password));
      out += '@';
    }
    out += u.host.find(':') != std::string::npos ? "[" + u.host + "]" : percent_encode(u.host);
    if (u.port) out += ":" + std::to_string(*u.port);
    out += "/" + percent_encode(u.database);
  }
  char sep = '?';
  for (const auto& [k, v] : u.params) {
    out += sep;
    out += percent_encode(k) + "=" + (redact && is_secret_key(k) ? "***" : percent_encode(v));
    sep = '&';
  }
  return out;
}

StorageOptions StorageUri::options() const {
  StorageOptions o;
  // Options that two spellings set: both given is refused, even when they agree.
  std::map<std::string_view, std::string> spelled;
  auto once = [&](std::string_view option, const std::string& key, const std::string& value) {
    const auto [it, added] = spelled.emplace(option, key + "=" + value);
    if (!added) {
      throw ConfigError("URI options " + it->second + " and " + key + "=" + value +
                        " both set the " + std::string(option) + "; give one");
    }
  };
  for (const auto& [key, value] : params) {
    if (key == "history" || key == "keep_history" || key == "keep-history") {
      once("history mode", key, value);
    } else if (key == "read_only" || key == "read-only") {
      once("read-only flag", key, value);
    }
    if (key == "history") {
      if (value == "free") {
        o.history = HistoryMode::free;
      } else if (value == "preserving") {
        o.history = HistoryMode::preserving;
      } else {
        throw ConfigError("option history: expected 'free' or 'preserving', got '" + value + "'");
      }
    } else if (key == "keep_history" || key == "keep-history") {
      o.history = parse_bool(key, value) ? HistoryMode::preserving : HistoryMode::free;
    } else if (key == "read_only" || key == "read-only") {
      o.read_only = parse_bool(key, value);
    } else if (key == "cache_mb") {
      o.cache_mb = static_cast<size_t>(parse_number(key, value));
    } else if (key == "commit_lock_timeout") {
      o.commit_lock_timeout = parse_number(key, value);
    } else if (key == "blob_dir" || key == "blob-dir") {
      once("blob directory", key, value);
      o.blob_dir = value;
    } else if (key == "blob_cache_size" || key == "blob-cache-size") {
      once("blob cache size", key, value);
      o.blob_cache_size = parse_byte_size(key, value);
    } else if (key == "blob_cache_size_check" || key == "blob-cache-size-check") {
      once("blob cache size check", key, value);
      o.blob_cache_size_check = parse_number(key, value);
      if (o.blob_cache_size_check <= 0 || o.blob_cache_size_check > 100) {
        throw ConfigError("option " + key +
                          ": expected a percentage above 0 and at most 100, got '" + value + "'");
      }
    } else if (key == "create") {
      o.create = parse_bool(key, value);
    } else {
      o.driver[key] = value;
    }
  }
  if (o.blob_cache_size && o.blob_dir.empty()) {
    throw ConfigError("option blob_cache_size limits the blob directory: give blob_dir too");
  }
  return o;
}

std::string redact_secrets(std::string_view text) {
  // Two shapes of secret: URI credentials "scheme://user:SECRET@host" and key=value pairs
  // "password=SECRET" / "passwd='SECRET'" / "pwd=SECRET" (libpq and MySQL styles).
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  auto lower_at = [&](size_t at, std::string_view word) {
    if (at + word.size() > text.size()) return false;
    for (size_t k = 0; k < word.size(); ++k) {
      if (std::tolower(static_cast<unsigned char>(text[at + k])) != word[k]) return false;
    }
    return true;
  };
  while (i < text.size()) {
    if (text.compare(i, 3, "://") == 0) {
      // Copy "://user" then, if a ':' comes before '@' and before any '/', hide the rest.
      out += "://";
      i += 3;
      const size_t end = text.find_first_of("/ \t\n'\"", i);
      const size_t at = text.find('@', i);
      const size_t colon = text.find(':', i);
      if (at != std::string_view::npos && colon < at &&
          (end == std::string_view::npos || at < end)) {
        out.append(text.substr(i, colon + 1 - i));
        out += "***";
        i = at;
      }
      continue;
    }
    bool matched = false;
    for (std::string_view key : {"sslpassword", "password", "passwd", "pwd"}) {
      const bool word_start = i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1]));
      if (!word_start || !lower_at(i, key)) continue;
      size_t j = i + key.size();
      while (j < text.size() && text[j] == ' ') ++j;
      if (j >= text.size() || text[j] != '=') continue;
      ++j;
      while (j < text.size() && text[j] == ' ') ++j;
      out.append(text.substr(i, j - i));
      out += "***";
      if (j < text.size() && text[j] == '\'') {
        const size_t close = text.find('\'', j + 1);
        j = close == std::string_view::npos ? text.size() : close + 1;
      } else {
        while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j])) &&
               text[j] != '&') {
          ++j;
        }
      }
      i = j;
      matched = true;
      break;
    }
    if (!matched) out += text[i++];
  }
  return out;
}

std::string sqlite_pragma_problem(const std::string& name, const std::string& value) {
  auto plain = [](const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    });
  };
  if (!plain(name) || !plain(value)) {
    return "pragma names and values may hold only letters, digits, '_', '-' and '.'";
  }
  if (sqlite_pragma_is_relstores(name, value)) return "";
  // SQLite reads pragma names in any case.
  const std::string n = lowercase(name);
  if (n == "journal_mode" || n == "query_only" || n == "foreign_keys") {
    return std::string("relstore sets this pragma itself") +
           (n == "journal_mode" ? " (to wal)" : "");
  }
  if (n == "busy_timeout") return "relstore sets this pragma itself (from commit_lock_timeout)";
  return "";
}

bool sqlite_pragma_is_set_at_creation(const std::string& name) {
  const std::string n = lowercase(name);
  return n == "page_size" || n == "auto_vacuum";
}

bool sqlite_pragma_is_relstores(const std::string& name, const std::string& value) {
  return lowercase(name) == "journal_mode" && lowercase(value) == "wal";
}

}  // namespace relstore
