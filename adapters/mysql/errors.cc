#include "adapters/mysql/errors.h"

#include <string>

#include "relstore/errors.h"

namespace relstore::mysql {
namespace {

// Server error numbers (mysqld_error.h) and client error numbers (errmsg.h) relstore
// treats specially. Named here because only driver.cc may include the client headers,
// and those do not define the server numbers anyway.
enum : int {
  kTooManyConnections = 1040,  // ER_CON_COUNT_ERROR
  kDbAccessDenied = 1044,      // ER_DBACCESS_DENIED_ERROR
  kAccessDenied = 1045,        // ER_ACCESS_DENIED_ERROR
  kBadDb = 1049,               // ER_BAD_DB_ERROR
  kServerShutdown = 1053,      // ER_SERVER_SHUTDOWN
  kDuplicateKey = 1062,        // ER_DUP_ENTRY
  kTableAccessDenied = 1142,   // ER_TABLEACCESS_DENIED_ERROR
  kNoSuchTable = 1146,         // ER_NO_SUCH_TABLE
  kPacketTooLarge = 1153,      // ER_NET_PACKET_TOO_LARGE
  kLockWaitTimeout = 1205,     // ER_LOCK_WAIT_TIMEOUT (MariaDB's NOWAIT failure too)
  kDeadlock = 1213,            // ER_LOCK_DEADLOCK
  kTooManyUserConns = 1203,    // ER_TOO_MANY_USER_CONNECTIONS
  kUserLimitReached = 1226,    // ER_USER_LIMIT_REACHED
  kSpecificAccess = 1227,      // ER_SPECIFIC_ACCESS_DENIED_ERROR
  kReadOnlyServer = 1290,      // ER_OPTION_PREVENTS_STATEMENT (--read-only)
  kNoSuchProcedure = 1305,     // ER_SP_DOES_NOT_EXIST
  kProcAccessDenied = 1370,    // ER_PROCACCESS_DENIED_ERROR
  kReadOnlyTxn = 1792,         // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
  kConnectionKilled = 1927,    // MariaDB ER_CONNECTION_KILLED
  kLockNowait = 3572,          // MySQL 8 ER_LOCK_NOWAIT
  kClientTimeout = 4031,       // MySQL 8 ER_CLIENT_INTERACTION_TIMEOUT
  kConnectionError = 2002,     // CR_CONNECTION_ERROR (socket)
  kConnHostError = 2003,       // CR_CONN_HOST_ERROR
  kUnknownHost = 2005,         // CR_UNKNOWN_HOST
  kServerGone = 2006,          // CR_SERVER_GONE_ERROR
  kServerLost = 2013,          // CR_SERVER_LOST
  kServerLostExtended = 2055,  // CR_SERVER_LOST_EXTENDED
};

}  // namespace

bool is_disconnect(int code) {
  switch (code) {
    case kServerShutdown:
    case kConnectionKilled:
    case kClientTimeout:
    case kConnectionError:
    case kConnHostError:
    case kUnknownHost:
    case kServerGone:
    case kServerLost:
    case kServerLostExtended:
      return true;
    default:
      return false;
  }
}

void throw_error(int code, std::string_view message, Context ctx, std::string_view what) {
  const std::string text = std::string(what) + ": " + std::string(message) + " (MySQL error " +
                           std::to_string(code) + ")";
  switch (code) {
    case kLockWaitTimeout:
    case kLockNowait:
      if (ctx == Context::commit) {
        throw UnableToAcquireCommitLockError("could not take the commit lock in time: " + text);
      }
      if (ctx == Context::vote) {
        throw LockConflictError("an object is locked by another transaction: " + text);
      }
      throw StorageError("lock wait timeout: " + text);
    case kDeadlock:
      // InnoDB rolled the whole transaction back; running it again may succeed.
      throw LockConflictError("deadlock with another transaction: " + text);
    case kAccessDenied:
      throw StorageError("access denied (wrong user name or password?): " + text);
    case kDbAccessDenied:
    case kTableAccessDenied:
    case kSpecificAccess:
    case kProcAccessDenied:
      throw StorageError("the MySQL user lacks a privilege relstore needs: " + text);
    case kBadDb:
      throw SchemaError("the database does not exist (create it with CREATE DATABASE): " + text);
    case kNoSuchTable:
      throw SchemaError("the database lacks a table relstore needs: " + text);
    case kNoSuchProcedure:
      throw SchemaError(
          "a relstore stored procedure is missing (open the database once "
          "writable to install it): " +
          text);
    case kReadOnlyServer:
    case kReadOnlyTxn:
      throw ReadOnlyError("the MySQL server or transaction is read-only: " + text);
    case kPacketTooLarge:
      throw StorageError("a record is larger than the server's max_allowed_packet: " + text);
    case kDuplicateKey:
      throw StorageError("duplicate key: " + text);
    case kUserLimitReached:
      // Also max_queries_per_hour and max_updates_per_hour: an hourly quota, which an
      // immediate retry does not help.
      throw StorageError("the MySQL user reached a resource limit of its account: " + text);
    case kTooManyConnections:
    case kTooManyUserConns:
      // The server is at a limit now, not wrong: a retry may get in (PostgreSQL's 53300
      // is retryable too).
      throw DisconnectedError("the MySQL server refuses more connections for now: " + text);
    default:
      break;
  }
  if (is_disconnect(code)) {
    if (ctx == Context::connect) {
      throw DisconnectedError("cannot reach the MySQL server: " + text);
    }
    // During the finish the commit's outcome is unknown: the server completes a COMMIT
    // it has received after the client is gone.
    if (ctx == Context::commit) {
      throw CommitOutcomeUnknownError(
          "lost the connection to the MySQL server while committing: the commit may or may "
          "not have been applied; the next transaction reconnects and reads which: " +
          text);
    }
    throw DisconnectedError(
        "lost the connection to the MySQL server (the next transaction "
        "reconnects): " +
        text);
  }
  throw StorageError(text);
}

}  // namespace relstore::mysql
