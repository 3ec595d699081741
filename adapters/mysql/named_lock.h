// Named locks (GET_LOCK) of a session, one per database and purpose: MySQL has no
// advisory locks. A session keeps one until it lets go or ends. The name is
// "<purpose>.<md5 of the database name>": names are server-wide and at most 64
// characters long.
#pragma once

#include <string_view>

#include "adapters/mysql/driver.h"

namespace relstore::mysql {

// Waits up to `seconds` for the lock; false when another session still holds it.
bool get_named_lock(Connection& conn, std::string_view purpose, int seconds,
                    Context ctx = Context::other);
void release_named_lock(Connection& conn, std::string_view purpose, Context ctx = Context::other);

}  // namespace relstore::mysql
