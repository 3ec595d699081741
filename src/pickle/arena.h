// Byte storage for strings the decoder has to rewrite (escaped protocol 0 text). Pieces never
// move, so values can hold plain pointers into them; reset() keeps the memory for the next
// record, so a warmed-up decoder does not allocate.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <vector>

namespace relstore::pickle {

class ByteArena {
 public:
  // Room for `n` bytes that stay valid until reset().
  char* allocate(size_t n) {
    if (n > kChunk) {  // a big piece gets a chunk of its own
      big_.push_back(std::make_unique<char[]>(n));
      return big_.back().get();
    }
    if (chunks_.empty() || used_ + n > kChunk) {
      if (current_ + 1 < chunks_.size() && !chunks_.empty()) {
        ++current_;
      } else {
        chunks_.push_back(std::make_unique<char[]>(kChunk));
        current_ = chunks_.size() - 1;
      }
      used_ = 0;
    }
    char* p = chunks_[current_].get() + used_;
    used_ += n;
    return p;
  }

  void reset() {
    current_ = 0;
    used_ = 0;
    big_.clear();
    // Keep the small chunks; a record that needed many does not pin them all forever.
    if (chunks_.size() > 4) chunks_.resize(4);
  }

 private:
  static constexpr size_t kChunk = 64 * 1024;
  std::vector<std::unique_ptr<char[]>> chunks_;
  std::vector<std::unique_ptr<char[]>> big_;
  size_t current_ = 0;
  size_t used_ = 0;
};

}  // namespace relstore::pickle
