// SQL files from sql/ and migrations/, compiled into the library.
#pragma once

#include <string_view>
#include <vector>

namespace relstore {

// The text of an embedded file by its path under the repository's sql/ or migrations/
// folder, e.g. "sql/sqlite/schema_hp.sql". Throws std::logic_error for an unknown name.
std::string_view embedded_sql(std::string_view name);
std::vector<std::string_view> embedded_sql_names();

}  // namespace relstore
