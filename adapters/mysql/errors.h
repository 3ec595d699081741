// Translation of MySQL/MariaDB error numbers into relstore errors, in one place.
#pragma once

#include <string_view>

namespace relstore::mysql {

// What the failing call was doing, which decides how a lock timeout is reported: at vote
// it is an object lock (a retryable conflict), at finish the commit lock.
enum class Context { connect, read, vote, commit, other };

// Throws the relstore error for server or client error number `code`.
[[noreturn]] void throw_error(int code, std::string_view message, Context ctx,
                              std::string_view what);

// Whether `code` means the connection is gone (the connection must not be reused).
bool is_disconnect(int code);

}  // namespace relstore::mysql
