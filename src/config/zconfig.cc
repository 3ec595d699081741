#include "config/zconfig.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>

#include "relstore/errors.h"

namespace relstore {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// ZConfig's substitutions in a value: "$$" is a dollar sign and "$(NAME)" the environment
// variable NAME; "$name" and "${name}" name a %define (not supported here). Anything else
// after a "$" is an error, as in ZConfig.
// Messages name the key, never the value: it may be a password.
std::string substitute(std::string_view value, const std::string& key,
                       const std::function<ConfigError(std::string)>& fail) {
  const std::string in = " in the value of '" + key + "'";
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] != '$') {
      out += value[i];
      continue;
    }
    const std::string_view rest = value.substr(i + 1);
    if (rest.starts_with('$')) {
      out += '$';
      ++i;
    } else if (rest.starts_with('(')) {
      const size_t close = rest.find(')');
      if (close == std::string_view::npos) throw fail("'$(' without ')'" + in);
      const std::string name(rest.substr(1, close - 1));
      const char* env = name.empty() ? nullptr : std::getenv(name.c_str());
      if (!env) {
        // A variable's name is no secret, unless it is a password with "$(" in it.
        const bool secret = key.find("pass") != std::string::npos || key == "dsn";
        throw fail("the environment variable " + (secret ? "named" : "'" + name + "'") + in +
                   " is not set");
      }
      out += env;
      i += close + 1;
    } else if (!rest.empty() && (rest.front() == '{' || rest.front() == '_' ||
                                 std::isalpha(static_cast<unsigned char>(rest.front())))) {
      throw fail("a '$' followed by a name" + in +
                 " refers to a %define, which is not supported; write '$$' for a dollar sign");
    } else {
      throw fail("a '$'" + in +
                 " must be followed by '$', '(NAME)' or a name; write '$$' for a dollar sign");
    }
  }
  return out;
}

}  // namespace

std::optional<std::string> ZConfigSection::get(std::string_view key) const {
  for (const auto& [k, v] : keys) {
    if (k == key) return v;
  }
  return std::nullopt;
}

const ZConfigSection* ZConfigSection::child(std::string_view t) const {
  for (const auto& s : sections) {
    if (s.type == t) return &s;
  }
  return nullptr;
}

ZConfigFile parse_zconfig(std::string_view text, const std::string& filename) {
  ZConfigFile file;
  std::vector<ZConfigSection*> stack{&file.root};
  int line_no = 0;
  size_t pos = 0;
  auto fail = [&](const std::string& why) -> ConfigError {
    return ConfigError(filename + ":" + std::to_string(line_no) + ": " + why);
  };
  while (pos <= text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    const std::string_view line = trim(text.substr(pos, eol - pos));
    pos = eol + 1;
    ++line_no;
    if (line.empty() || line.front() == '#') continue;
    if (line.front() == '%') {
      const std::string_view directive = trim(line.substr(1));
      if (directive.starts_with("import")) {
        file.imports.emplace_back(trim(directive.substr(6)));
      } else if (directive.starts_with("define")) {
        throw fail("%define is not supported; write the value in place");
      } else {
        throw fail("unknown directive '" + std::string(line) + "'");
      }
      continue;
    }
    if (line.front() == '<') {
      if (line.back() != '>') throw fail("a section line must end with '>'");
      std::string_view inner = trim(line.substr(1, line.size() - 2));
      if (!inner.empty() && inner.front() == '/') {
        const std::string type = lower(trim(inner.substr(1)));
        if (stack.size() == 1) throw fail("</" + type + "> closes no section");
        if (stack.back()->type != type) {
          throw fail("</" + type + "> closes <" + stack.back()->type + "> opened at line " +
                     std::to_string(stack.back()->line));
        }
        stack.pop_back();
        continue;
      }
      bool self_closing = false;
      if (!inner.empty() && inner.back() == '/') {
        self_closing = true;
        inner = trim(inner.substr(0, inner.size() - 1));
      }
      const size_t space = inner.find_first_of(" \t");
      ZConfigSection section;
      section.type = lower(inner.substr(0, space));
      // Section names are case-insensitive in ZConfig, like types.
      if (space != std::string_view::npos) section.name = lower(trim(inner.substr(space)));
      section.line = line_no;
      if (section.type.empty()) throw fail("a section needs a type");
      stack.back()->sections.push_back(std::move(section));
      if (!self_closing) stack.push_back(&stack.back()->sections.back());
      continue;
    }
    const size_t space = line.find_first_of(" \t");
    const std::string key = lower(line.substr(0, space));
    const std::string value =
        space == std::string_view::npos ? "" : substitute(trim(line.substr(space)), key, fail);
    // ZConfig refuses a key given twice in a section; taking either silently could, say,
    // make a destination history-free that the later line said should keep history.
    // (Except in <pragmas>, where RelStorage takes any key, as a ZConfig multikey.)
    if (stack.back()->type != "pragmas" && stack.back()->get(key)) {
      throw fail("'" + key + "' is given twice in " +
                 (stack.size() == 1 ? std::string("the file") : "<" + stack.back()->type + ">"));
    }
    stack.back()->keys.emplace_back(key, value);
  }
  if (stack.size() > 1) {
    line_no = stack.back()->line;
    throw fail("<" + stack.back()->type + "> is never closed");
  }
  return file;
}

}  // namespace relstore
