#include "backend/blob_chunks.h"

#include <algorithm>
#include <fstream>

#include "relstore/errors.h"

namespace relstore::backend {

void read_blob_chunks(const std::string& path, size_t chunk_size,
                      const std::function<void(int64_t, Bytes&&)>& sink) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw StorageError("cannot open blob file " + path);
  in.seekg(0, std::ios::end);
  const auto size = static_cast<size_t>(in.tellg());
  in.seekg(0);
  int64_t num = 0;
  size_t done = 0;
  do {
    Bytes piece(std::min(chunk_size, size - done), '\0');
    if (!in.read(piece.data(), static_cast<std::streamsize>(piece.size()))) {
      throw StorageError("cannot read blob file " + path);
    }
    done += piece.size();
    sink(num++, std::move(piece));
  } while (done < size);
}

}  // namespace relstore::backend
