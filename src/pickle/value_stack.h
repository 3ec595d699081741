// The walker's value stack: a vector cut down to what the interpreter loop needs, so that a
// push is a compare and a store (std::vector::push_back was not inlined into the loop).
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <type_traits>

namespace relstore::pickle {

template <class T>
class ValueStack {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  size_t size() const { return size_; }
  T* data() { return items_.get(); }
  T& operator[](size_t i) { return items_[i]; }
  T& back() { return items_[size_ - 1]; }
  void clear() { size_ = 0; }
  void pop_back() { --size_; }
  // Shrinks to n items (never grows).
  void resize(size_t n) { size_ = n; }
  [[gnu::always_inline]] void push_back(T v) {
    if (size_ == capacity_) [[unlikely]]
      grow();
    items_[size_++] = v;
  }

 private:
  [[gnu::noinline]] void grow() {
    const size_t capacity = capacity_ ? capacity_ * 2 : 256;
    auto bigger = std::make_unique_for_overwrite<T[]>(capacity);
    if (size_) std::memcpy(bigger.get(), items_.get(), size_ * sizeof(T));
    items_ = std::move(bigger);
    capacity_ = capacity;
  }

  std::unique_ptr<T[]> items_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace relstore::pickle
