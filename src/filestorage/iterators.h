// TransactionIterators over a mapped Data.fs, forward and backward.
#pragma once

#include <memory>
#include <optional>

#include "filestorage/file_map.h"
#include "relstore/filestorage.h"
#include "relstore/storage.h"

namespace relstore::fs {

// Oldest first, `start` through `stop` inclusive, reading at most `limit` bytes of `map`.
std::unique_ptr<TransactionIterator> make_forward_iterator(std::shared_ptr<const FileMap> map,
                                                           FileStorageWarning warn,
                                                           std::optional<Tid> start,
                                                           std::optional<Tid> stop,
                                                           std::optional<uint64_t> limit);

// Newest first, from the transaction ending at byte `end`.
std::unique_ptr<TransactionIterator> make_backward_iterator(std::shared_ptr<const FileMap> map,
                                                            uint64_t end);

}  // namespace relstore::fs
