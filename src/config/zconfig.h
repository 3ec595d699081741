// A reader for ZConfig files as zodbconvert and zodbpack use them (design.md §2).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace relstore {

// `<type name>` … `</type>` with `key value` lines and nested sections.
struct ZConfigSection {
  std::string type;  // lower-cased, e.g. "relstorage"
  std::string name;  // e.g. "source"; may be empty
  std::string file;  // the file the section starts in (%include can bring in others)
  int line = 0;
  std::vector<std::pair<std::string, std::string>> keys;  // keys lower-cased, in file order
  std::vector<std::string> key_lines;                     // "file:line" of each key
  std::vector<ZConfigSection> sections;

  std::optional<std::string> get(std::string_view key) const;
  const ZConfigSection* child(std::string_view type) const;
  // "file:line" of the key's line, or of the section's when it has no such key.
  std::string where(std::string_view key) const;
};

struct ZConfigFile {
  ZConfigSection root;               // type "", the top level
  std::vector<std::string> imports;  // %import lines
};

// Parses ZConfig text (%define, $name, $(ENV) and %include, the latter relative to
// `filename`); throws ConfigError naming the file and the line.
ZConfigFile parse_zconfig(std::string_view text, const std::string& filename);

}  // namespace relstore
