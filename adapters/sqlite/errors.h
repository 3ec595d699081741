// Translation of SQLite result codes into relstore errors, in one place.
#pragma once

#include <sqlite3.h>

#include <string_view>

namespace relstore::sqlite {

// What the failing call was doing, which decides how a busy database is reported.
enum class Context { open, read, vote, commit, other };

// Throws the relstore error for SQLite result code `rc` (extended codes allowed).
[[noreturn]] void throw_error(int rc, std::string_view message, Context ctx, std::string_view what);

// Throws with the message of `db`'s last error.
[[noreturn]] void throw_db_error(int rc, sqlite3* db, Context ctx, std::string_view what);

}  // namespace relstore::sqlite
