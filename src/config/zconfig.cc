#include "config/zconfig.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

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

bool is_define_name(std::string_view s) {
  if (s.empty() || !(s.front() == '_' || std::isalpha(static_cast<unsigned char>(s.front())))) {
    return false;
  }
  return std::all_of(s.begin(), s.end(), [](char c) {
    return c == '_' || std::isalnum(static_cast<unsigned char>(c));
  });
}

using Defines = std::map<std::string, std::string>;

bool secret_key(const std::string& key) {
  return key.find("pass") != std::string::npos || key == "dsn";
}

// ZConfig's substitutions in a value: "$$" is a dollar sign, "$(NAME)" the environment
// variable NAME, "$name" and "${name}" a %define (names case-insensitive). Anything else
// after a "$" is an error, as in ZConfig.
// Messages name the key, never the value; for a `secret` one (a password, a dsn, any
// %define, which is where passwords often go) not even a name found after a '$'.
std::string substitute(std::string_view value, const std::string& key, bool secret,
                       const Defines& defines,
                       const std::function<ConfigError(std::string)>& fail) {
  const std::string in = " in the value of '" + key + "'";
  const auto lookup = [&](std::string_view name) -> const std::string& {
    const auto it = defines.find(lower(name));
    if (it == defines.end()) {
      throw fail((secret ? std::string("a name") : "the name '" + std::string(name) + "'") + in +
                 " is not defined by a %define; write '$$' for a dollar sign");
    }
    return it->second;
  };
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
        throw fail("the environment variable " + (secret ? "named" : "'" + name + "'") + in +
                   " is not set");
      }
      out += env;
      i += close + 1;
    } else if (rest.starts_with('{')) {
      const size_t close = rest.find('}');
      const std::string_view name = rest.substr(1, close == std::string_view::npos ? 0 : close - 1);
      if (close == std::string_view::npos || !is_define_name(name)) {
        throw fail("'${' must be followed by a name and '}'" + in +
                   "; write '$$' for a dollar sign");
      }
      out += lookup(name);
      i += close + 1;
    } else if (!rest.empty() &&
               (rest.front() == '_' || std::isalpha(static_cast<unsigned char>(rest.front())))) {
      size_t n = 1;
      while (n < rest.size() &&
             (rest[n] == '_' || std::isalnum(static_cast<unsigned char>(rest[n])))) {
        ++n;
      }
      out += lookup(rest.substr(0, n));
      i += n;
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

namespace {

// One file's lines into the open sections; %include parses another file into the same
// place, with the same %defines, as ZConfig does.
class Parser {
 public:
  explicit Parser(ZConfigFile& file) : file_(file), stack_{&file.root} {}

  void parse(std::string_view text, const std::string& filename, int depth);

 private:
  void directive(std::string_view line, const std::string& filename, int depth,
                 const std::function<ConfigError(std::string)>& fail);

  ZConfigFile& file_;
  std::vector<ZConfigSection*> stack_;
  Defines defines_;
};

// ZConfig resolves an %include against the including file's location.
std::string read_included(const std::string& name, const std::string& from,
                          const std::function<ConfigError(std::string)>& fail) {
  namespace fs = std::filesystem;
  const fs::path path =
      fs::path(name).is_absolute() ? fs::path(name) : fs::path(from).parent_path() / name;
  // An ifstream opens a directory and reads nothing from it: the include would be empty.
  // (A path stat refuses is left to the open below, which names it on its line.)
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    throw fail("the included file " + path.string() + " is a directory");
  }
  std::ifstream in(path);
  if (!in) throw fail("cannot read the included file " + path.string());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void Parser::directive(std::string_view line, const std::string& filename, int depth,
                       const std::function<ConfigError(std::string)>& fail) {
  const std::string_view body = trim(line.substr(1));
  const size_t space = body.find_first_of(" \t");
  const std::string word = lower(body.substr(0, space));
  const std::string_view rest = space == std::string_view::npos ? "" : trim(body.substr(space));
  if (word == "import") {
    file_.imports.emplace_back(rest);
  } else if (word == "define") {
    const size_t gap = rest.find_first_of(" \t");
    const std::string name = lower(rest.substr(0, gap));
    if (!is_define_name(name)) throw fail("'" + name + "' is not a name %define can define");
    const std::string value = gap == std::string_view::npos
                                  ? ""
                                  : substitute(trim(rest.substr(gap)), name, true, defines_, fail);
    // ZConfig allows a name to be defined again only with the same value.
    if (const auto it = defines_.find(name); it != defines_.end() && it->second != value) {
      throw fail("%define " + name + " gives a name a second, different value");
    }
    defines_[name] = value;
  } else if (word == "include") {
    if (depth >= 16) throw fail("%include nested more than 16 deep (does a file include itself?)");
    const std::string target = substitute(rest, "%include", false, defines_, fail);
    if (target.empty()) throw fail("%include names no file");
    const std::string text = read_included(target, filename, fail);
    const std::string included =
        std::filesystem::path(target).is_absolute()
            ? target
            : (std::filesystem::path(filename).parent_path() / target).string();
    parse(text, included, depth + 1);
  } else {
    // The name only: the rest of the line may be a %define's secret value.
    throw fail("unknown directive '%" + word + "' (ZConfig has %import, %define and %include)");
  }
}

void Parser::parse(std::string_view text, const std::string& filename, int depth) {
  // Sections open when this file began: as in ZConfig, a file (an included one too) closes
  // only what it opened and closes everything it opens.
  const size_t base = stack_.size();
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
      directive(line, filename, depth, fail);
      continue;
    }
    if (line.front() == '<') {
      if (line.back() != '>') throw fail("a section line must end with '>'");
      std::string_view inner = trim(line.substr(1, line.size() - 2));
      if (!inner.empty() && inner.front() == '/') {
        const std::string type = lower(trim(inner.substr(1)));
        if (stack_.size() == base) {
          throw fail("</" + type + "> closes no section" +
                     (depth ? std::string(" this included file opened") : ""));
        }
        if (stack_.back()->type != type) {
          throw fail("</" + type + "> closes <" + stack_.back()->type + "> opened at line " +
                     std::to_string(stack_.back()->line));
        }
        stack_.pop_back();
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
      section.file = filename;
      if (section.type.empty()) throw fail("a section needs a type");
      stack_.back()->sections.push_back(std::move(section));
      if (!self_closing) stack_.push_back(&stack_.back()->sections.back());
      continue;
    }
    const size_t space = line.find_first_of(" \t");
    const std::string key = lower(line.substr(0, space));
    const std::string value =
        space == std::string_view::npos
            ? ""
            : substitute(trim(line.substr(space)), key, secret_key(key), defines_, fail);
    ZConfigSection& into = *stack_.back();
    // ZConfig refuses a key given twice in a section; taking either silently could, say,
    // make a destination history-free that the later line said should keep history.
    // (Except in <pragmas>, where RelStorage takes any key, as a ZConfig multikey.)
    if (into.type != "pragmas" && into.get(key)) {
      throw fail("'" + key + "' is given twice in " +
                 (stack_.size() == 1 ? std::string("the file") : "<" + into.type + ">"));
    }
    into.keys.emplace_back(key, value);
    into.key_lines.push_back(filename + ":" + std::to_string(line_no));
  }
  if (stack_.size() > base) {
    line_no = stack_.back()->line;
    throw ConfigError(stack_.back()->file + ":" + std::to_string(line_no) + ": <" +
                      stack_.back()->type + "> is never closed" +
                      (depth ? " in the included file that opens it" : ""));
  }
}

}  // namespace

std::string ZConfigSection::where(std::string_view key) const {
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i].first == key && i < key_lines.size()) return key_lines[i];
  }
  return file + ":" + std::to_string(line);
}

ZConfigFile parse_zconfig(std::string_view text, const std::string& filename) {
  ZConfigFile file;
  Parser(file).parse(text, filename, 0);
  return file;
}

}  // namespace relstore
