// Numbered, append-only schema migrations embedded from migrations/<dialect>/.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace relstore {

struct Migration {
  int version = 0;
  std::string name;       // file name without the number and extension
  std::string_view text;  // whole file
};

// The migrations of a dialect ("sqlite", "postgresql", "mysql"), ordered by version.
std::vector<Migration> migrations_for(std::string_view dialect);

// The statements of a migration that apply to a history mode. A file is split into
// sections by lines "-- @common", "-- @hf" and "-- @hp" (text before the first marker is
// common) and into statements at lines ending with ";". Lines "-- @end" close a
// statement block kept whole (procedure bodies containing ";").
std::vector<std::string> migration_statements(std::string_view text, bool keep_history);

// Tables and views only relstore creates (its migrations beyond RelStorage's baseline):
// relstore_*, object_json*, the view newt.
bool is_relstore_only_table(std::string_view name);

// Those of `tables` (names, or a map keyed by name).
inline const std::string& table_name(const std::string& name) { return name; }
template <class T>
const std::string& table_name(const std::pair<const std::string, T>& entry) {
  return entry.first;
}
template <class Tables>
std::vector<std::string> relstore_only_tables(const Tables& tables) {
  std::vector<std::string> out;
  for (const auto& t : tables) {
    if (is_relstore_only_table(table_name(t))) out.push_back(table_name(t));
  }
  return out;
}

// Throws NewerSchemaError when `version`, the highest in relstore_schema, is past the
// newest migration this relstore knows for `dialect`.
void check_not_newer(std::string_view dialect, int version, const std::string& where);

// The error for a database holding relstore's own tables but not object_state: RelStorage's
// tables were dropped (its zap or drop_all) without relstore's, which would otherwise make
// every open fail on what is left. Names `where` and the leftovers to drop.
std::string leftover_tables_message(const std::string& where,
                                    const std::vector<std::string>& leftovers);

}  // namespace relstore
