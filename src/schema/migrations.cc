#include "schema/migrations.h"

#include <algorithm>
#include <stdexcept>

#include "embedded_sql.h"
#include "relstore/errors.h"

namespace relstore {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

bool only_comments(std::string_view stmt) {
  size_t pos = 0;
  while (pos < stmt.size()) {
    size_t eol = stmt.find('\n', pos);
    if (eol == std::string_view::npos) eol = stmt.size();
    const std::string_view line = trim(stmt.substr(pos, eol - pos));
    if (!line.empty() && !line.starts_with("--")) return false;
    pos = eol + 1;
  }
  return true;
}

}  // namespace

std::vector<Migration> migrations_for(std::string_view dialect) {
  const std::string prefix = "migrations/" + std::string(dialect) + "/";
  std::vector<Migration> out;
  for (std::string_view name : embedded_sql_names()) {
    if (!name.starts_with(prefix)) continue;
    std::string_view file = name.substr(prefix.size());
    const size_t underscore = file.find('_');
    if (underscore != 4 || !file.ends_with(".sql")) {
      throw std::logic_error("migration file name must be NNNN_name.sql: " + std::string(name));
    }
    Migration m;
    m.version = std::stoi(std::string(file.substr(0, 4)));
    m.name = std::string(file.substr(5, file.size() - 5 - 4));
    m.text = embedded_sql(name);
    out.push_back(std::move(m));
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.version < b.version; });
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].version != static_cast<int>(i) + 1) {
      throw std::logic_error("migrations of " + std::string(dialect) +
                             " are not numbered 1, 2, 3…");
    }
  }
  return out;
}

std::vector<std::string> migration_statements(std::string_view text, bool keep_history) {
  std::vector<std::string> out;
  std::string current;
  bool active = true;
  bool in_block = false;  // between "-- @begin" and "-- @end": one statement
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    const std::string_view raw = text.substr(pos, eol - pos);
    const std::string_view line = trim(raw);
    pos = eol + 1;
    if (line == "-- @common" || line == "-- @hf" || line == "-- @hp") {
      active = line == "-- @common" || (line == "-- @hp") == keep_history;
      continue;
    }
    if (!active) continue;
    if (line == "-- @begin") {
      in_block = true;
      continue;
    }
    if (line == "-- @end") {
      in_block = false;
      if (!only_comments(current)) out.push_back(current);
      current.clear();
      continue;
    }
    current.append(raw);
    current += '\n';
    if (!in_block && line.ends_with(';')) {
      if (!only_comments(current)) out.push_back(current);
      current.clear();
    }
  }
  if (!only_comments(current)) out.push_back(current);
  return out;
}

void check_not_newer(std::string_view dialect, int version, const std::string& where) {
  const int newest = migrations_for(dialect).back().version;
  if (version > newest) throw NewerSchemaError(where, version, newest);
}

bool is_relstore_only_table(std::string_view name) {
  return name.starts_with("relstore_") || name.starts_with("object_json") || name == "newt";
}

std::string leftover_tables_message(const std::string& where,
                                    const std::vector<std::string>& leftovers) {
  std::string names;
  for (const auto& t : leftovers) names += (names.empty() ? "" : ", ") + t;
  return where + " has relstore's own tables (" + names +
         ") but no object_state: RelStorage's tables were dropped without them. Nothing was "
         "changed. To create a new database here, drop these too (the view newt first); to "
         "keep the data, restore object_state and the tables with it.";
}

}  // namespace relstore
