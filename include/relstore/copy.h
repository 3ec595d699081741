// copy_transactions_from: replay one storage's transactions into another.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "relstore/storage.h"

namespace relstore {

struct CopyStats {
  uint64_t transactions = 0;
  uint64_t records = 0;
  uint64_t bytes = 0;
};

// Restores every transaction of `src` (from `start`, inclusive) into `dst` with its TID,
// status, user, description, extension bytes and records, one transaction at a time
// (restore semantics: no conflict checks). `progress` runs after each transaction.
CopyStats copy_transactions(StorageInstance& src, StorageInstance& dst,
                            std::optional<Tid> start = std::nullopt,
                            const std::function<void(const CopyStats&)>& progress = {});

}  // namespace relstore
