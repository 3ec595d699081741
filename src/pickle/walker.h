// The one opcode interpreter of the project. It reads a pickle, checks every length against
// the bytes that are really there, keeps the stack, the marks and the memo, and hands each
// value-level operation to a consumer: the tree builder of the JSON decoder or the reference
// scanner. It never imports or calls anything.
//
// A consumer C provides `using Value = …`, `static constexpr Value kEmpty` (an unset memo slot),
// `static bool is_empty(Value)`, `void at(uint32_t offset)` (the current opcode's offset, for
// values that remember where they came from) and one method per operation below.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "pickle/arena.h"
#include "pickle/fault.h"
#include "pickle/opcodes.h"
#include "pickle/text.h"
#include "pickle/value_stack.h"
#include "relstore/pickle.h"
#include "relstore/types.h"

// Small helpers of the interpreter loop; GCC gives up inlining them into the big switch.
#define RELSTORE_INLINE [[gnu::always_inline]] inline

namespace relstore::pickle {

// "pickle error at byte 12 (opcode 0x71 'q'): what went wrong"
std::string describe_error(std::string_view what, size_t offset, int opcode);

// LONG1/LONG4 payloads past this size cannot have at most kPickleMaxLongDigits digits.
inline constexpr size_t kMaxLongBytes = 4153;
// Writing a big integer in decimal takes time quadratic in its size (about 6 ms at
// kMaxLongBytes), so a record's big integers may cost, summing their sizes squared, what
// 16 of the largest do (~100 ms). Small ones (a UUID's 16 bytes) then never run out.
inline constexpr size_t kMaxBigIntCostPerRecord = 16 * kMaxLongBytes * kMaxLongBytes;

template <class C>
class Walker {
 public:
  using Value = typename C::Value;

  Walker(C& consumer, ByteArena& arena) : c_(consumer), arena_(arena) {}

  // Forgets the memo; call before each record (the two pickles of a record share it).
  void reset() {
    memo_.clear();
    memo_count_ = 0;
    big_int_cost_ = 0;
  }

  // Runs the pickle starting at `pos` in `data` up to its STOP, returns the value STOP pops and
  // leaves `pos` just after the STOP. Throws PickleError.
  Value run(std::string_view data, size_t& pos);

 private:
  // Bounds-checked readers; they advance p_.
  RELSTORE_INLINE void need(size_t n) const {
    if (size_ - p_ < n) [[unlikely]]
      truncated(n);
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void truncated(uint64_t n) {
    fault("truncated: needs " + std::to_string(n) + " more bytes");
  }
  RELSTORE_INLINE uint8_t u8() {
    need(1);
    return base_[p_++];
  }
  RELSTORE_INLINE uint32_t u16le() {
    need(2);
    const uint32_t v = base_[p_] | (uint32_t{base_[p_ + 1]} << 8);
    p_ += 2;
    return v;
  }
  RELSTORE_INLINE uint32_t u32le() {
    need(4);
    uint32_t v;
    std::memcpy(&v, base_ + p_, 4);
    p_ += 4;
    if constexpr (std::endian::native == std::endian::big) v = byteswap32(v);
    return v;
  }
  RELSTORE_INLINE uint64_t u64le() {
    const uint64_t lo = u32le();
    const uint64_t hi = u32le();
    return lo | (hi << 32);
  }
  static uint32_t byteswap32(uint32_t v) {
    return (v >> 24) | ((v >> 8) & 0xFF00) | ((v << 8) & 0xFF0000) | (v << 24);
  }
  RELSTORE_INLINE std::string_view bytes(uint64_t n) {
    if (n > size_ - p_) [[unlikely]]
      truncated(n);
    std::string_view v(reinterpret_cast<const char*>(base_ + p_), static_cast<size_t>(n));
    p_ += static_cast<size_t>(n);
    return v;
  }
  std::string_view line() {
    const void* nl = std::memchr(base_ + p_, '\n', size_ - p_);
    if (nl == nullptr) fault("truncated: text argument without newline");
    const size_t end = static_cast<size_t>(static_cast<const uint8_t*>(nl) - base_);
    std::string_view v(reinterpret_cast<const char*>(base_ + p_), end - p_);
    p_ = end + 1;
    return v;
  }

  // Stack discipline of the unpickler: values above the newest mark form the current frame.
  RELSTORE_INLINE size_t frame_base() const { return frame_; }
  RELSTORE_INLINE void require(size_t n) const {
    if (stack_.size() - frame_base() < n) [[unlikely]]
      fault("stack underflow");
  }
  RELSTORE_INLINE Value pop() {
    require(1);
    const Value v = stack_.back();
    stack_.pop_back();
    return v;
  }
  RELSTORE_INLINE Value& top() {
    require(1);
    return stack_.back();
  }
  // Pops the newest mark; returns the stack index of the first value above it.
  size_t pop_mark() {
    if (marks_.empty()) fault("no MARK on the stack");
    const size_t k = marks_.back();
    marks_.pop_back();
    frame_ = marks_.empty() ? 0 : marks_.back();
    return k;
  }
  // pop_mark() for APPENDS/SETITEMS/ADDITEMS: the target sits just below the mark.
  size_t pop_mark_with_target() {
    const size_t k = pop_mark();
    if (k <= frame_base()) fault("no object below the MARK");
    return k;
  }

  [[noreturn, gnu::cold, gnu::noinline]] static void bad_memo_key(uint64_t key, const char* why) {
    fault("memo key " + std::to_string(key) + why);
  }
  RELSTORE_INLINE void memo_put(uint64_t key, Value v) {
    if (key == memo_.size() && key < memo_limit_) [[likely]] {
      // Picklers number memo entries in order, so this is nearly always an append.
      memo_.push_back(v);
      ++memo_count_;
      return;
    }
    memo_put_slow(key, v);
  }
  void memo_put_slow(uint64_t key, Value v) {
    if (key >= memo_limit_) bad_memo_key(key, " over the limit");
    if (key < memo_.size()) {
      if (C::is_empty(memo_[key])) ++memo_count_;
      memo_[key] = v;
      return;
    }
    // Fill the gap, then append (filling and then overwriting the new slot stalled on
    // store forwarding).
    memo_.resize(static_cast<size_t>(key), C::kEmpty);
    memo_.push_back(v);
    ++memo_count_;
  }
  RELSTORE_INLINE Value memo_get(uint64_t key) {
    if (key >= memo_.size() || C::is_empty(memo_[key])) [[unlikely]] {
      bad_memo_key(key, " was never stored");
    }
    return memo_[key];
  }
  uint64_t text_key() {
    const TextInt t = parse_text_int(line(), false);
    if (t.big || t.negative) fault("bad memo key");
    return static_cast<uint64_t>(t.value);
  }

  void push_text_int(std::string_view text, bool is_long) {
    const TextInt t = parse_text_int(text, is_long);
    stack_.push_back(t.big ? c_.bigint_text(t.negative, t.digits) : c_.int64(t.value));
  }
  void push_long_bytes(std::string_view b) {
    if (b.size() > kMaxLongBytes) fault("integer longer than 10000 digits");
    if (b.size() > 8) {
      big_int_cost_ += b.size() * b.size();
      if (big_int_cost_ > kMaxBigIntCostPerRecord) {
        fault("big integers in one record too long to write in decimal in time");
      }
    }
    if (b.size() <= 8) {  // two's complement, little-endian; sign-extend from the top byte
      uint64_t v = 0;
      for (size_t i = b.size(); i-- > 0;) v = (v << 8) | static_cast<uint8_t>(b[i]);
      if (!b.empty() && b.size() < 8 && (static_cast<uint8_t>(b.back()) & 0x80)) {
        v |= ~uint64_t{0} << (8 * b.size());
      }
      stack_.push_back(c_.int64(static_cast<int64_t>(v)));
    } else {
      stack_.push_back(c_.bigint_le(b));
    }
  }

  RELSTORE_INLINE void step(uint8_t op);

  C& c_;
  ByteArena& arena_;
  ValueStack<Value> stack_;
  std::vector<size_t> marks_;
  size_t frame_ = 0;  // stack index of the current frame: just above the newest mark
  std::vector<Value> memo_;
  size_t memo_count_ = 0;
  size_t big_int_cost_ = 0;  // sum of squared LONG1/LONG4 sizes beyond 64 bits, this record
  size_t memo_limit_ = 0;
  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  size_t p_ = 0;
  bool stopped_ = false;
};

template <class C>
typename Walker<C>::Value Walker<C>::run(std::string_view data, size_t& pos) {
  base_ = reinterpret_cast<const uint8_t*>(data.data());
  size_ = data.size();
  p_ = pos;
  // Each memoized object costs at least one byte of pickle, so a real pickler never uses a
  // key as large as the record.
  memo_limit_ = size_ < kPickleMaxMemo ? size_ : kPickleMaxMemo;
  stack_.clear();
  marks_.clear();
  frame_ = 0;
  stopped_ = false;
  size_t op_pos = p_;
  try {
    while (!stopped_) {
      if (p_ >= size_) {
        throw PickleError(describe_error("pickle ends without STOP", size_, -1), size_, -1);
      }
      op_pos = p_;
      c_.at(static_cast<uint32_t>(op_pos));
      step(base_[p_++]);
      // Picklers follow nearly every new value with BINPUT; taking it here saves a trip
      // through the opcode switch (an indirect jump that predicts poorly) for a third of
      // all opcodes.
      if (size_ - p_ >= 2 && base_[p_] == kBinPut && stack_.size() > frame_ && !stopped_) {
        op_pos = p_;
        memo_put(base_[p_ + 1], stack_.back());
        p_ += 2;
      }
    }
  } catch (const Fault& f) {
    throw PickleError(describe_error(f.what(), op_pos, base_[op_pos]), op_pos, base_[op_pos]);
  }
  pos = p_;
  const Value result = stack_.back();
  stack_.clear();
  return result;
}

}  // namespace relstore::pickle

#include "pickle/walker_step.h"  // the opcodes

#undef RELSTORE_INLINE
