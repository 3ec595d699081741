#include "relstore/filestorage.h"

namespace relstore {
namespace {

std::string describe(const std::string& path, uint64_t offset, const std::string& problem,
                     std::optional<Oid> oid) {
  std::string s = "FileStorage " + path + ", byte offset " + std::to_string(offset);
  if (oid) s += ", oid " + oid->hex();
  return s + ": " + problem;
}

}  // namespace

FileStorageError::FileStorageError(const std::string& path, uint64_t offset,
                                   const std::string& problem, std::optional<Oid> oid)
    : StorageError(describe(path, offset, problem, oid)), path_(path), offset_(offset), oid_(oid) {}

}  // namespace relstore
