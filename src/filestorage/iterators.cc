#include "filestorage/iterators.h"

#include <vector>

#include "filestorage/scanner.h"

namespace relstore::fs {
namespace {

class ForwardIterator : public TransactionIterator {
 public:
  ForwardIterator(std::shared_ptr<const FileMap> map, FileStorageWarning warn,
                  std::optional<Tid> start, std::optional<Tid> stop, std::optional<uint64_t> limit)
      : scanner_(std::move(map), std::move(warn), limit), start_(start), stop_(stop) {
    scanner_.check_magic();
    scanner_.map().advise_sequential();
  }

  bool next(TransactionRecord& out) override {
    while (!done_) {
      TxnHeader h;
      if (!scanner_.next(pos_, h, &records_)) break;
      if (start_ && h.tid < *start_) continue;
      if (stop_ && h.tid > *stop_) break;
      scanner_.fill(h, records_, out);
      return true;
    }
    done_ = true;
    return false;
  }

 private:
  Scanner scanner_;
  std::optional<Tid> start_, stop_;
  uint64_t pos_ = kMagicSize;
  bool done_ = false;
  std::vector<DataHeader> records_;
};

class BackwardIterator : public TransactionIterator {
 public:
  BackwardIterator(std::shared_ptr<const FileMap> map, uint64_t end)
      : scanner_(std::move(map), nullptr, end), pos_(end) {
    scanner_.check_magic();
  }

  bool next(TransactionRecord& out) override {
    while (pos_ > kMagicSize) {
      const uint64_t end = pos_;
      const TxnHeader h = scanner_.previous(end, &records_);
      pos_ = h.pos;
      if (later_ && h.tid >= *later_) {
        scanner_.fail(h.pos, "tid " + h.tid.hex() + " is not less than the tid " + later_->hex() +
                                 " of the transaction after it");
      }
      later_ = h.tid;
      const bool newest = end == scanner_.limit();
      // A 'c' transaction is an unfinished commit: it can only be the file's last one,
      // which the forward reader stops before.
      if (h.status == 'c') {
        if (!newest) scanner_.fail(h.pos + 16, "status 'c' in the middle of the file");
        continue;
      }
      if (h.status == 'u') continue;
      scanner_.fill(h, records_, out);
      return true;
    }
    return false;
  }

 private:
  Scanner scanner_;
  uint64_t pos_;
  std::optional<Tid> later_;
  std::vector<DataHeader> records_;
};

}  // namespace

std::unique_ptr<TransactionIterator> make_forward_iterator(std::shared_ptr<const FileMap> map,
                                                           FileStorageWarning warn,
                                                           std::optional<Tid> start,
                                                           std::optional<Tid> stop,
                                                           std::optional<uint64_t> limit) {
  return std::make_unique<ForwardIterator>(std::move(map), std::move(warn), start, stop, limit);
}

std::unique_ptr<TransactionIterator> make_backward_iterator(std::shared_ptr<const FileMap> map,
                                                            uint64_t end) {
  return std::make_unique<BackwardIterator>(std::move(map), end);
}

}  // namespace relstore::fs

namespace relstore {

std::unique_ptr<TransactionIterator> iterate_file_storage(const std::string& path,
                                                          std::optional<Tid> start,
                                                          std::optional<Tid> stop,
                                                          FileStorageWarning on_warning) {
  return fs::make_forward_iterator(fs::FileMap::open(path), std::move(on_warning), start, stop,
                                   std::nullopt);
}

std::unique_ptr<TransactionIterator> iterate_file_storage_backward(const std::string& path,
                                                                   std::optional<uint64_t> end) {
  auto map = fs::FileMap::open(path);
  const uint64_t e = end.value_or(map->size());
  if (e > map->size()) {
    throw FileStorageError(path, e, "backward reading cannot start past the end of the file");
  }
  return fs::make_backward_iterator(std::move(map), e);
}

Tid file_storage_last_tid(const std::string& path, FileStorageWarning on_warning) {
  auto map = fs::FileMap::open(path);
  fs::Scanner scanner(map, on_warning);
  scanner.check_magic();
  try {
    uint64_t end = map->size();
    while (end > fs::kMagicSize) {
      const fs::TxnHeader h = scanner.previous(end, nullptr);
      if (h.status == ' ' || h.status == 'p') return h.tid;
      end = h.pos;  // 'u' (undone) or a 'c' left by a crash: look further back
    }
    return Tid(0);
  } catch (const FileStorageError&) {
    // Most likely a truncated tail, which only a forward reading can step over (and
    // reports as a warning); real damage throws from there too.
  }
  auto it = fs::make_forward_iterator(map, std::move(on_warning), std::nullopt, std::nullopt,
                                      std::nullopt);
  TransactionRecord t;
  Tid last;
  while (it->next(t)) last = t.tid;
  return last;
}

}  // namespace relstore
