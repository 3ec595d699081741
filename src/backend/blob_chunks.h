// Reading a commit's blob file for the blob_chunk table, in the pieces a dialect stores.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "relstore/types.h"

namespace relstore::backend {

// Calls `sink(chunk_num, bytes)` for each piece of at most `chunk_size` bytes of the file,
// in order; an empty file gives one empty chunk 0, so every blob has a row. Throws
// StorageError naming the file when it cannot be read.
void read_blob_chunks(const std::string& path, size_t chunk_size,
                      const std::function<void(int64_t, Bytes&&)>& sink);

}  // namespace relstore::backend
