// Errors mirroring ZODB.POSException, classified by what the caller should do next.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "relstore/types.h"

namespace relstore {

// Base of every error relstore raises. Driver exceptions never escape an adapter: each
// dialect translates them into one of these in one place.
class StorageError : public std::runtime_error {
 public:
  explicit StorageError(const std::string& what) : std::runtime_error(what) {}
  // True when running the same application transaction again may succeed.
  virtual bool retryable() const { return false; }
};

// The object (or the requested revision of it) does not exist.
class POSKeyError : public StorageError {
 public:
  explicit POSKeyError(Oid oid, std::optional<Tid> tid = std::nullopt);
  Oid oid() const { return oid_; }
  std::optional<Tid> tid() const { return tid_; }

 private:
  Oid oid_;
  std::optional<Tid> tid_;
};

// A write lost a race. `serials` is (committed, given) as in ZODB: the serial now current
// in the database, and the serial the writer had read.
class ConflictError : public StorageError {
 public:
  ConflictError(std::optional<Oid> oid, std::optional<std::pair<Tid, Tid>> serials,
                const std::string& detail = "");
  std::optional<Oid> oid() const { return oid_; }
  std::optional<std::pair<Tid, Tid>> serials() const { return serials_; }
  bool retryable() const override { return true; }

 protected:
  ConflictError(const std::string& what, std::optional<Oid> oid,
                std::optional<std::pair<Tid, Tid>> serials);

 private:
  std::optional<Oid> oid_;
  std::optional<std::pair<Tid, Tid>> serials_;
};

// An object read with readCurrent (check_current_serial) changed before the commit.
class ReadConflictError : public ConflictError {
 public:
  ReadConflictError(std::optional<Oid> oid, std::optional<std::pair<Tid, Tid>> serials,
                    const std::string& detail = "");
};

// Another transaction holds a lock on an object we must write (lock timeout or deadlock).
class LockConflictError : public ConflictError {
 public:
  explicit LockConflictError(const std::string& detail);
};

// A call was made with a transaction other than the one begun, or in the wrong phase.
class StorageTransactionError : public StorageError {
 public:
  using StorageError::StorageError;
};

// A write was attempted on a read-only storage or instance.
class ReadOnlyError : public StorageError {
 public:
  ReadOnlyError() : StorageError("the storage is read-only") {}
  explicit ReadOnlyError(const std::string& what) : StorageError(what) {}
};

class UndoError : public StorageError {
 public:
  explicit UndoError(const std::string& what, std::optional<Oid> oid = std::nullopt)
      : StorageError(what), oid_(oid) {}
  std::optional<Oid> oid() const { return oid_; }

 private:
  std::optional<Oid> oid_;
};

// The commit lock could not be taken within the configured timeout.
class UnableToAcquireCommitLockError : public StorageError {
 public:
  using StorageError::StorageError;
  bool retryable() const override { return true; }
};

// The connection to the database was lost; the next transaction reconnects.
class DisconnectedError : public StorageError {
 public:
  using StorageError::StorageError;
  bool retryable() const override { return true; }
};

// The connection was lost during tpc_finish, after the commit had been sent: the server
// may have committed it. Not retryable: running the application transaction again could
// apply its changes twice; the application reads the objects to learn which happened.
class CommitOutcomeUnknownError : public DisconnectedError {
 public:
  using DisconnectedError::DisconnectedError;
  bool retryable() const override { return false; }
};

// The database exists but is not what was asked for: other history mode, foreign schema,
// not a database at all, missing privileges.
class SchemaError : public StorageError {
 public:
  using StorageError::StorageError;
};

// Nothing is there yet (no schema, no SQLite database file): opening with create=true
// would make it. Raised by opens that may not create (read-only, create=false).
class NoSchemaError : public SchemaError {
 public:
  using SchemaError::SchemaError;
};

// The database's relstore schema is at a version newer than this relstore knows: a newer
// release made it, and this one must not write to (or replace the procedures of) it.
class NewerSchemaError : public SchemaError {
 public:
  NewerSchemaError(const std::string& where, int version, int newest_known)
      : SchemaError(where + " has relstore schema version " + std::to_string(version) +
                    ", newer than this relstore knows (" + std::to_string(newest_known) +
                    "); use the newer relstore that made it"),
        version_(version) {}
  int version() const { return version_; }

 private:
  int version_;
};

// A URI, option or configuration file is malformed (a usage error: exit code 2).
class ConfigError : public StorageError {
 public:
  using StorageError::StorageError;
};

}  // namespace relstore
