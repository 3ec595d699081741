// Structural reading of Data.fs: transaction walks in both directions, data record checks
// and back-pointer chains. Every rule of filestorage.md "Reading" is checked here, once.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "filestorage/file_map.h"
#include "filestorage/format.h"
#include "relstore/filestorage.h"
#include "relstore/storage.h"

namespace relstore::fs {

class Scanner {
 public:
  // Reads `map` up to `limit` bytes (default: all of it); bytes past `limit` are treated as
  // not there, which gives a storage's iterators a fixed snapshot of an appended file.
  Scanner(std::shared_ptr<const FileMap> map, FileStorageWarning warn,
          std::optional<uint64_t> limit = std::nullopt);

  const FileMap& map() const { return *map_; }
  uint64_t limit() const { return limit_; }
  // The tid of the last transaction next() read, 'u' ones included.
  std::optional<Tid> last_tid() const { return last_tid_; }

  // Throws FileStorageError unless the file starts with FS30 or FS21; returns the magic.
  std::string_view check_magic() const;

  // Reads and checks the transaction at `pos` and advances `pos` past it, skipping 'u'
  // transactions. `records` (if not null) receives its data record headers. Returns false
  // at the end: cleanly at `limit`, or with a warning at a truncated tail or a 'c'
  // transaction; `pos` is then the end of the last complete transaction.
  bool next(uint64_t& pos, TxnHeader& h, std::vector<DataHeader>* records);

  // Reads and checks the transaction whose trailing length ends at `end`, for walking
  // backward. 'u' and 'c' transactions are returned with their records unchecked.
  TxnHeader previous(uint64_t end, std::vector<DataHeader>* records) const;

  // The header of the transaction at `tloc` of a record already checked.
  TxnHeader txn_header_at(uint64_t tloc) const;
  // The data record at `pos`, which the index or a scan vouched for.
  DataHeader data_header_at(uint64_t pos) const;

  // The revision of `rec`'s oid that `rec.prev` points to, checked.
  DataHeader prev_record(const DataHeader& rec) const;
  // The record one back-pointer hop from `rec` (plen 0, back != 0), checked.
  DataHeader back_target(const DataHeader& rec) const;
  // `rec`'s data, following back pointers; none when the revision is absent.
  std::optional<std::string_view> resolve(const DataHeader& rec) const;

  std::string_view user(const TxnHeader& h) const { return map_->view(h.user_pos(), h.ulen); }
  std::string_view description(const TxnHeader& h) const {
    return map_->view(h.description_pos(), h.dlen);
  }
  std::string_view extension(const TxnHeader& h) const {
    return map_->view(h.extension_pos(), h.elen);
  }

  // Fills `out` from a checked transaction, reusing its buffers.
  void fill(const TxnHeader& h, const std::vector<DataHeader>& records,
            TransactionRecord& out) const;

  [[noreturn]] void fail(uint64_t offset, const std::string& problem,
                         std::optional<Oid> oid = std::nullopt) const;
  void warn(const std::string& message) const;

 private:
  // Where forward reading stops short of `limit_` (a header cut short, a 'c' transaction,
  // a length running past the end): a warning and false, as for a crash's tail — unless a
  // complete transaction starting after `pos` ends the file, which makes `pos` damage in
  // the middle of the file, an error (ZODB tells the two apart by the same trailer).
  bool stop_at_tail(uint64_t pos, const std::string& what) const;
  // The file became shorter than the map while it was read: a warning and false.
  bool shrank(uint64_t pos) const;
  // `limit_` when the file ends there in a committed transaction; 0 otherwise.
  uint64_t committed_end() const;
  // The transaction whose trailing length ends the readable part of the file, when those
  // last 8 bytes and the header they point to agree; none otherwise.
  std::optional<TxnHeader> transaction_ending_at_limit() const;
  // True when every byte from `pos` to `limit_` is zero.
  bool zeros_to_limit(uint64_t pos) const;
  // Checks of a header that do not depend on the reading direction.
  void check_header(const TxnHeader& h) const;
  void check_records(const TxnHeader& h, std::vector<DataHeader>* records) const;
  // True when a record of transaction `th` starts exactly at `target`.
  bool starts_record(const TxnHeader& th, uint64_t target) const;
  // Reads the record that pointer field `field` of `rec` (at `field_pos`) names.
  DataHeader linked_record(const DataHeader& rec, uint64_t target, uint64_t field_pos,
                           const char* what) const;

  std::shared_ptr<const FileMap> map_;
  FileStorageWarning warn_;
  uint64_t limit_;
  // Below this offset the file cannot be cut while we read: it ends in a committed
  // transaction, and only an unfinished one is ever truncated (ZODB's abort after vote).
  // Headers past it are read with FileMap::read; a mapped page past a truncated end would
  // raise SIGBUS. Zero: the file's tail is unfinished or damaged. Set by the first next().
  std::optional<uint64_t> stable_end_;
  std::optional<Tid> last_tid_;  // of the previous transaction read forward
  // Back-pointer records resolved by this scanner: record offset -> offset of the record
  // holding the data (0: absent). Undo writes chains of back pointers; following each to
  // its end for every record made reading a file of them quadratic.
  mutable std::unordered_map<uint64_t, uint64_t> resolved_;
};

}  // namespace relstore::fs
