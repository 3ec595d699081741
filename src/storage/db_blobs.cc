// Blobs on the database backends (conformance.md lines 37-38): a blob's content goes into
// blob_chunk with its record, and the storage's blob directory caches committed contents
// as read-only files, RelStorage's layout with shared-blob-dir false.
#include <filesystem>

#include "relstore/errors.h"
#include "storage/db_instance.h"
#include "storage/db_storage.h"

namespace relstore {

void StorageInstance::store_blob(Oid, std::optional<Tid>, const Bytes&, const std::string&,
                                 const TransactionMetaData&) {
  throw StorageError("this storage does not store blobs");
}

void StorageInstance::restore_blob(Oid, Tid, const Bytes&, const std::string&,
                                   const TransactionMetaData&) {
  throw StorageError("this storage does not store blobs");
}

std::string StorageInstance::load_blob(Oid, Tid) {
  throw StorageError("this storage does not store blobs");
}

std::ifstream StorageInstance::open_committed_blob(Oid oid, Tid tid) {
  const std::string path = load_blob(oid, tid);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw StorageError("cannot open blob file " + path);
  return in;
}

void DbInstance::store_blob(Oid oid, std::optional<Tid> serial, const Bytes& data,
                            const std::string& blob_file, const TransactionMetaData& txn) {
  require_writable();  // ReadOnlyError first, as ZODB's read-only storages do
  check_txn(txn, Phase::begun, "store_blob");
  // The file is ours from here: moved under the blob directory, where a commit finds it
  // and an abort removes it.
  std::string taken = storage_.blob_dir("store_blob").take(blob_file);
  add_record(oid, serial.value_or(Tid(0)), data);
  blobs_[oid] = std::move(taken);
}

void DbInstance::restore_blob(Oid oid, Tid serial, const Bytes& data, const std::string& blob_file,
                              const TransactionMetaData& txn) {
  require_writable();
  check_txn(txn, Phase::begun, "restore_blob");
  std::string taken = storage_.blob_dir("restore_blob").take(blob_file);
  try {
    restore(oid, serial, data, txn);
  } catch (...) {
    // Refused (a serial other than the transaction's TID): the file goes back where it was.
    std::error_code ec;
    std::filesystem::rename(taken, blob_file, ec);
    if (ec) std::filesystem::remove(taken, ec);
    throw;
  }
  blobs_[oid] = std::move(taken);
}

std::string DbInstance::load_blob(Oid oid, Tid tid) {
  const BlobDir& dir = storage_.blob_dir("load_blob");
  if (dir.has_blob(oid, tid)) {
    const std::string path = dir.blob_path(oid, tid);
    storage_.blob_served(path);
    return path;
  }
  ensure_snapshot();
  // Streamed from the database into a temporary file, renamed into place: processes
  // sharing the directory never see a partial file, and the content is never in memory.
  const auto tmp = dir.write_temporary_from(
      [&](const BlobDir::PieceWriter& write) { return load_conn().load_blob(oid, tid, write); });
  if (!tmp) throw POSKeyError(oid, tid);
  dir.publish(*tmp, oid, tid);
  const std::string path = dir.blob_path(oid, tid);
  storage_.blob_cached(path);
  return path;
}

std::vector<backend::PendingBlob> DbInstance::pending_blobs() const {
  std::vector<backend::PendingBlob> out;
  out.reserve(blobs_.size());
  for (const auto& [oid, path] : blobs_) out.push_back({oid, path});
  return out;
}

void DbInstance::drop_blob(Oid oid) noexcept {
  auto it = blobs_.find(oid);
  if (it == blobs_.end()) return;
  std::error_code ec;
  std::filesystem::remove(it->second, ec);
  blobs_.erase(it);
}

void DbInstance::publish_blobs(Tid tid) noexcept {
  for (const auto& [oid, path] : blobs_) {
    try {
      const BlobDir& dir = storage_.blob_dir("tpc_finish");
      dir.publish(path, oid, tid);
      storage_.blob_cached(dir.blob_path(oid, tid));
    } catch (const std::exception&) {
      // The commit holds the content; the cache fills from blob_chunk on the next load.
    }
  }
  blobs_.clear();
}

void DbInstance::discard_blobs() noexcept {
  while (!blobs_.empty()) drop_blob(blobs_.begin()->first);
}

}  // namespace relstore
