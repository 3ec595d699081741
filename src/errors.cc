#include "relstore/errors.h"

namespace relstore {
namespace {

std::string conflict_text(const char* kind, std::optional<Oid> oid,
                          std::optional<std::pair<Tid, Tid>> serials, const std::string& detail) {
  std::string s = kind;
  if (oid) s += " (oid " + oid->hex();
  if (serials) {
    s += oid ? ", " : " (";
    s += "serial this txn started with " + serials->second.hex() + ", serial currently committed " +
         serials->first.hex();
  }
  if (oid || serials) s += ")";
  if (!detail.empty()) s += ": " + detail;
  return s;
}

}  // namespace

POSKeyError::POSKeyError(Oid oid, std::optional<Tid> tid)
    : StorageError("POSKeyError: no object " + oid.hex() +
                   (tid ? " at revision " + tid->hex() : std::string())),
      oid_(oid),
      tid_(tid) {}

ConflictError::ConflictError(std::optional<Oid> oid, std::optional<std::pair<Tid, Tid>> serials,
                             const std::string& detail)
    : ConflictError(conflict_text("database conflict error", oid, serials, detail), oid, serials) {}

ConflictError::ConflictError(const std::string& what, std::optional<Oid> oid,
                             std::optional<std::pair<Tid, Tid>> serials)
    : StorageError(what), oid_(oid), serials_(serials) {}

ReadConflictError::ReadConflictError(std::optional<Oid> oid,
                                     std::optional<std::pair<Tid, Tid>> serials,
                                     const std::string& detail)
    : ConflictError(conflict_text("database read conflict error", oid, serials, detail), oid,
                    serials) {}

LockConflictError::LockConflictError(const std::string& detail)
    : ConflictError("object lock conflict: " + detail, std::nullopt, std::nullopt) {}

}  // namespace relstore
