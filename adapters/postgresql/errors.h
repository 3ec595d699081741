// Translation of PostgreSQL errors (SQLSTATE codes, lost connections) into relstore
// errors, in one place.
#pragma once

#include <libpq-fe.h>

#include <string>
#include <string_view>

#include "relstore/errors.h"

namespace relstore::postgresql {

// What the failing call was doing, which decides how a lock timeout is reported.
enum class Context {
  connect,  // opening a connection
  read,     // loads, polls, iteration
  vote,     // object and readCurrent locks
  commit,   // the commit lock and the move
  schema,   // creating or upgrading the schema
  other,
};

// An error as the server (or libpq) reported it.
struct ServerError {
  std::string sqlstate;  // five characters; empty when libpq itself failed
  std::string message;   // primary message, without the "ERROR:" prefix
  std::string detail;
  std::string hint;
  bool connection_lost = false;  // the connection is unusable now
};

// A lock a schema change needs was not granted within the transaction's lock_timeout
// (Context::schema); the schema installer gives way and tries again.
class SchemaLockBusy : public StorageError {
 public:
  using StorageError::StorageError;
};

// Throws the relstore error for `e`. `what` says what was being done and on which database
// (a redacted URI); it is part of the message.
[[noreturn]] void throw_error(const ServerError& e, Context ctx, std::string_view what);

// Reads the error out of a failed result (`res` may be null) of connection `conn`.
ServerError error_of(const PGresult* res, const PGconn* conn);

}  // namespace relstore::postgresql
