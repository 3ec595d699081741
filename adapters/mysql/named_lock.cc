#include "adapters/mysql/named_lock.h"

#include <string>

namespace relstore::mysql {
namespace {

std::string lock_name(std::string_view purpose) {
  return "CONCAT('" + std::string(purpose) + ".', MD5(DATABASE()))";
}

}  // namespace

bool get_named_lock(Connection& conn, std::string_view purpose, int seconds, Context ctx) {
  // 1: taken; 0: still held by another session after the wait.
  return conn.query_int(
             "SELECT GET_LOCK(" + lock_name(purpose) + ", " + std::to_string(seconds) + ")", 0,
             ctx) == 1;
}

void release_named_lock(Connection& conn, std::string_view purpose, Context ctx) {
  conn.exec("DO RELEASE_LOCK(" + lock_name(purpose) + ")", ctx);
}

}  // namespace relstore::mysql
