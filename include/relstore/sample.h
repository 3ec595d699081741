// `relstore sample`: a realistic ZODB content tree, written into any storage, for the
// README, benchmarks and tests (the project ships no third-party data).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "relstore/storage.h"

namespace relstore {

struct SampleStats {
  uint64_t objects = 0;  // distinct oids written
  uint64_t records = 0;  // data records (objects are rewritten as the tree grows)
  uint64_t transactions = 0;
  uint64_t bytes = 0;  // bytes of record data
};

struct SampleOptions {
  // Objects in the tree: the root, folders and documents.
  uint64_t objects = 1000;
  // Same seed, same options => byte-identical records, TIDs and metadata.
  uint64_t seed = 1;
  // The first transaction's TID; later ones follow at simulated intervals of seconds to
  // minutes. Default: 2024-01-01 00:00:00 UTC.
  std::optional<Tid> start_tid;
  // Called after each committed transaction.
  std::function<void(const SampleStats&)> progress;
};

// Writes the tree with restore() and explicit increasing TIDs, so it works on any
// destination: root PersistentMapping (oid 0) -> section PersistentMappings -> folders
// (PersistentMapping or OOBTree-shaped) -> myapp.content.Document objects (title, text,
// created/modified datetimes, tags, views, rating, __parent__), in transactions of 1 to
// 50 records, some of them editing earlier documents. Every record is a real protocol-3
// ZODB record (class pickle + state pickle). The destination must be empty (StorageError
// otherwise), as the sample chooses oids and TIDs itself.
SampleStats write_sample(StorageInstance& dst, const SampleOptions& options);

// Opens `uri` for writing (a file: URI is created, or appended to when it exists and is
// empty), writes the sample and closes the storage. What `relstore sample` runs.
SampleStats write_sample(const std::string& uri, const SampleOptions& options);

}  // namespace relstore
