#include "adapters/postgresql/errors.h"

#include "relstore/errors.h"
#include "relstore/uri.h"

namespace relstore::postgresql {
namespace {

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// libpq reports a failed connection attempt as text only (no SQLSTATE is exposed), so
// the common cases are recognised by their wording to share the table below.
std::string sqlstate_of_connect_failure(std::string_view message) {
  if (contains(message, "password authentication failed") ||
      contains(message, "authentication failed") || contains(message, "no password supplied") ||
      contains(message, "no pg_hba.conf entry")) {
    return "28P01";
  }
  if (contains(message, "does not exist")) {
    return contains(message, "role") ? "28000" : "3D000";
  }
  if (contains(message, "too many clients") || contains(message, "remaining connection slots")) {
    return "53300";
  }
  return "08001";  // refused, unreachable, timed out, unknown host
}

std::string full_text(const ServerError& e, std::string_view problem, std::string_view what,
                      const std::string& sqlstate) {
  std::string text(what);
  text += ": ";
  text += problem;
  if (!e.message.empty()) {
    text += ": ";
    text += e.message;
  }
  if (!e.detail.empty()) text += " (" + e.detail + ")";
  if (!e.hint.empty()) text += " Hint: " + e.hint;
  if (!sqlstate.empty()) text += " [SQLSTATE " + sqlstate + "]";
  return redact_secrets(text);
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

ServerError error_of(const PGresult* res, const PGconn* conn) {
  ServerError e;
  auto field = [&](int code) -> std::string {
    const char* v = res ? PQresultErrorField(res, code) : nullptr;
    return v ? v : "";
  };
  e.sqlstate = field(PG_DIAG_SQLSTATE);
  e.message = trimmed(field(PG_DIAG_MESSAGE_PRIMARY));
  e.detail = trimmed(field(PG_DIAG_MESSAGE_DETAIL));
  e.hint = trimmed(field(PG_DIAG_MESSAGE_HINT));
  if (e.message.empty()) {
    const char* m = res ? PQresultErrorMessage(res) : nullptr;
    if (!m || !*m) m = conn ? PQerrorMessage(conn) : "unknown libpq error";
    e.message = trimmed(m);
  }
  e.connection_lost = !conn || PQstatus(conn) != CONNECTION_OK;
  return e;
}

void throw_error(const ServerError& e, Context ctx, std::string_view what) {
  std::string state = e.sqlstate;
  if (state.empty() && ctx == Context::connect) state = sqlstate_of_connect_failure(e.message);
  const std::string cls = state.substr(0, 2);
  auto text = [&](std::string_view problem) { return full_text(e, problem, what, e.sqlstate); };
  // A connection lost during the finish leaves the commit's outcome unknown: the server
  // completes a COMMIT it has received after the client is gone.
  auto throw_gone = [&](std::string_view problem) {
    if (ctx == Context::commit) {
      throw CommitOutcomeUnknownError(
          text(std::string(problem) +
               " while committing: the commit may or may not have been applied; the next "
               "transaction reconnects and reads which"));
    }
    throw DisconnectedError(text(std::string(problem) + "; the next transaction reconnects"));
  };

  if (state == "55P03") {  // lock_not_available: lock_timeout expired
    if (ctx == Context::vote) {
      throw LockConflictError(
          text("another transaction holds a lock on an object this one writes"));
    }
    if (ctx == Context::commit) {
      throw UnableToAcquireCommitLockError(text("could not take the commit lock in time"));
    }
    if (ctx == Context::schema) throw SchemaLockBusy(text("a lock could not be taken in time"));
    throw StorageError(text("a lock could not be taken in time"));
  }
  if (state == "40P01") {
    throw LockConflictError(text("deadlock with another transaction; retry the transaction"));
  }
  if (state == "40001") {
    throw ConflictError(std::nullopt, std::nullopt, text("serialization failure; retry"));
  }
  if (state == "53300") {
    throw DisconnectedError(text("the server has no connection slots left"));
  }
  if (state == "57P01" || state == "57P02" || state == "57P03") {
    throw_gone("the server ended the connection (shutdown, restart or an administrator command)");
  }
  if (state == "28P01" || state == "28000") {
    throw StorageError(text("authentication failed; check the user name and password"));
  }
  if (state == "3D000") throw SchemaError(text("the database does not exist"));
  if (state == "42501") {
    // The hint follows what was denied: a table's rights or its ownership are another
    // matter than CREATE on the schema.
    if (e.message.find("must be owner of") != std::string::npos) {
      throw SchemaError(
          text("permission denied: changing the schema needs the role that owns the tables "
               "(run relstore migrate as their owner)"));
    }
    if (e.message.find("permission denied for table") != std::string::npos ||
        e.message.find("permission denied for sequence") != std::string::npos ||
        e.message.find("permission denied for view") != std::string::npos) {
      throw SchemaError(
          text("permission denied: the role lacks rights on a table relstore uses (GRANT "
               "SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public, and USAGE on "
               "its sequences, to the role; tables created since the last GRANT need it "
               "again)"));
    }
    if (ctx == Context::schema) {
      throw SchemaError(
          text("permission denied: the role needs CREATE on the schema (GRANT CREATE ON "
               "SCHEMA public TO the role, or make it the schema's owner; owning the "
               "database is not enough before PostgreSQL 15), and upgrading relstore's "
               "functions later needs the role that created them"));
    }
    throw SchemaError(text("permission denied"));
  }
  if (state == "3F000") {
    throw SchemaError(text("no schema to work in: search_path names no existing schema"));
  }
  if (state == "42P01") throw SchemaError(text("the database lacks a table relstore needs"));
  if (state == "42883") {
    throw SchemaError(
        text("relstore's server functions are missing; open the database once "
             "with a writable storage to install them"));
  }
  if (state == "25006") throw ReadOnlyError(text("the server refused a write"));
  if (state == "53200") {
    throw StorageError(
        text("the server ran out of lock memory (a transaction locks one "
             "entry per modified object; raise max_locks_per_transaction)"));
  }
  if (state == "57014") throw StorageError(text("the statement was canceled"));
  if (cls == "23") throw StorageError(text("constraint violated"));
  if (cls == "08" || e.connection_lost) {
    if (ctx == Context::connect) {
      throw DisconnectedError(text("cannot connect to the PostgreSQL server"));
    }
    throw_gone("the connection to the PostgreSQL server was lost");
  }
  throw StorageError(text("PostgreSQL error"));
}

}  // namespace relstore::postgresql
