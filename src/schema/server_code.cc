#include "schema/server_code.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include "embedded_sql.h"
#include "md5.h"
#include "relstore/errors.h"

namespace relstore {

std::string server_code_comment(std::string_view md5) {
  return "relstore g" + std::to_string(kServerCodeGeneration) + " md5 " + std::string(md5);
}

int server_code_generation(std::string_view comment) {
  constexpr std::string_view kPrefix = "relstore g";
  if (!comment.starts_with(kPrefix)) return 0;
  const char* begin = comment.data() + kPrefix.size();
  const char* end = comment.data() + comment.size();
  int generation = 0;
  const auto [at, ec] = std::from_chars(begin, end, generation);
  if (ec != std::errc() || at == begin || at == end || *at != ' ') return 0;
  return generation;
}

void check_server_code_not_newer(const std::string& name, std::string_view comment,
                                 const std::string& where) {
  const int installed = server_code_generation(comment);
  if (installed > kServerCodeGeneration) {
    throw SchemaError(where + ": its server code (" + name + ") was installed by a newer " +
                      "relstore (generation " + std::to_string(installed) + ", this one's is " +
                      std::to_string(kServerCodeGeneration) +
                      "); nothing was changed. Open it with that relstore or a later one, or "
                      "read-only with this one");
  }
}

std::string server_code_digest() {
  std::vector<std::string_view> names;
  for (std::string_view name : embedded_sql_names()) {
    if (name.starts_with("sql/")) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  std::string all;
  for (std::string_view name : names) {
    all += name;
    all += '\0';
    all += embedded_sql(name);
    all += '\0';
  }
  return md5_hex(all);
}

}  // namespace relstore
