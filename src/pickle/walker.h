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

template <class C>
class Walker {
 public:
  using Value = typename C::Value;

  Walker(C& consumer, ByteArena& arena) : c_(consumer), arena_(arena) {}

  // Forgets the memo; call before each record (the two pickles of a record share it).
  void reset() {
    memo_.clear();
    memo_count_ = 0;
  }

  // Runs the pickle starting at `pos` in `data` up to its STOP, returns the value STOP pops and
  // leaves `pos` just after the STOP. Throws PickleError.
  Value run(std::string_view data, size_t& pos);

 private:
  // Bounds-checked readers; they advance p_.
  RELSTORE_INLINE void need(size_t n) const {
    if (size_ - p_ < n) [[unlikely]] truncated(n);
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
    if (n > size_ - p_) [[unlikely]] truncated(n);
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
    if (stack_.size() - frame_base() < n) [[unlikely]] fault("stack underflow");
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

template <class C>
RELSTORE_INLINE void Walker<C>::step(uint8_t op) {
  switch (op) {
    case kProto:
      if (u8() > kHighestProtocol) fault("unsupported protocol");
      break;
    case kFrame: {
      const uint64_t n = u64le();
      if (n > size_ - p_) fault("frame runs past the record");
      break;
    }
    case kStop: {
      const Value v = pop();
      stack_.clear();
      stack_.push_back(v);
      stopped_ = true;
      break;
    }

    // --- scalars ---
    case kNone: stack_.push_back(c_.none()); break;
    case kNewTrue: stack_.push_back(c_.boolean(true)); break;
    case kNewFalse: stack_.push_back(c_.boolean(false)); break;
    case kInt: {
      const std::string_view t = line();
      // Protocol 0 writes booleans as INT with these exact arguments.
      if (t == "01" || t == "00") {
        stack_.push_back(c_.boolean(t == "01"));
      } else {
        push_text_int(t, false);
      }
      break;
    }
    case kBinInt: stack_.push_back(c_.int64(static_cast<int32_t>(u32le()))); break;
    case kBinInt1: stack_.push_back(c_.int64(u8())); break;
    case kBinInt2: stack_.push_back(c_.int64(u16le())); break;
    case kLong: push_text_int(line(), true); break;
    case kLong1: push_long_bytes(bytes(u8())); break;
    case kLong4: {
      const int32_t n = static_cast<int32_t>(u32le());
      if (n < 0) fault("negative LONG4 length");
      if (static_cast<size_t>(n) > kMaxLongBytes) fault("integer longer than 10000 digits");
      push_long_bytes(bytes(static_cast<uint32_t>(n)));
      break;
    }
    case kFloat: stack_.push_back(c_.float64(parse_text_float(line()))); break;
    case kBinFloat: {
      need(8);  // big-endian on the wire
      const uint64_t bits = read_be64(base_ + p_);
      p_ += 8;
      stack_.push_back(c_.float64(std::bit_cast<double>(bits)));
      break;
    }

    // --- strings ---
    case kString: {
      const std::string_view t = line();
      std::string_view body = t;
      while (!body.empty() && (body.back() == '\r' || body.back() == ' ')) body.remove_suffix(1);
      if (body.size() < 2 || body.front() != body.back() ||
          (body.front() != '\'' && body.front() != '"')) {
        fault("STRING argument is not quoted");
      }
      stack_.push_back(c_.py2str(unescape_py2_string(body.substr(1, body.size() - 2), arena_)));
      break;
    }
    case kBinString: {
      const int32_t n = static_cast<int32_t>(u32le());
      if (n < 0) fault("negative BINSTRING length");
      stack_.push_back(c_.py2str(bytes(static_cast<uint32_t>(n))));
      break;
    }
    case kShortBinString: stack_.push_back(c_.py2str(bytes(u8()))); break;
    case kUnicode:
      stack_.push_back(c_.str(decode_raw_unicode_escape(line(), arena_)));
      break;
    case kBinUnicode: stack_.push_back(c_.str(bytes(u32le()))); break;
    case kShortBinUnicode: stack_.push_back(c_.str(bytes(u8()))); break;
    case kBinUnicode8: stack_.push_back(c_.str(bytes(u64le()))); break;
    case kBinBytes: stack_.push_back(c_.bytes(bytes(u32le()))); break;
    case kShortBinBytes: stack_.push_back(c_.bytes(bytes(u8()))); break;
    case kBinBytes8: stack_.push_back(c_.bytes(bytes(u64le()))); break;
    case kByteArray8: stack_.push_back(c_.bytearray(bytes(u64le()))); break;

    // --- containers ---
    case kEmptyTuple: stack_.push_back(c_.tuple(nullptr, 0)); break;
    case kTuple1:
    case kTuple2:
    case kTuple3: {
      const size_t n = op - kTuple1 + 1u;
      require(n);
      const Value v = c_.tuple(stack_.data() + stack_.size() - n, n);
      stack_.resize(stack_.size() - n);
      stack_.push_back(v);
      break;
    }
    case kTuple:
    case kList:
    case kDict:
    case kFrozenSet: {
      const size_t k = pop_mark();
      const size_t n = stack_.size() - k;
      const Value* items = stack_.data() + k;
      Value v;
      if (op == kTuple) {
        v = c_.tuple(items, n);
      } else if (op == kList) {
        v = c_.list(items, n);
      } else if (op == kDict) {
        if (n % 2) fault("DICT with an odd number of items");
        v = c_.dict(items, n);
      } else {
        v = c_.frozenset(items, n);
      }
      stack_.resize(k);
      stack_.push_back(v);
      break;
    }
    case kEmptyList: stack_.push_back(c_.list(nullptr, 0)); break;
    case kEmptyDict: stack_.push_back(c_.dict(nullptr, 0)); break;
    case kEmptySet: stack_.push_back(c_.set()); break;
    case kAppend: {
      require(2);
      const Value v = stack_.back();
      stack_.pop_back();
      c_.append(stack_.back(), &v, 1);
      break;
    }
    case kSetItem: {
      require(3);
      c_.setitems(stack_[stack_.size() - 3], stack_.data() + stack_.size() - 2, 2);
      stack_.resize(stack_.size() - 2);
      break;
    }
    case kAppends:
    case kSetItems:
    case kAddItems: {
      const size_t k = pop_mark_with_target();
      const size_t n = stack_.size() - k;
      const Value target = stack_[k - 1];
      if (op == kAppends) {
        c_.append(target, stack_.data() + k, n);
      } else if (op == kSetItems) {
        if (n % 2) fault("SETITEMS with an odd number of items");
        c_.setitems(target, stack_.data() + k, n);
      } else {
        c_.additems(target, stack_.data() + k, n);
      }
      stack_.resize(k);
      break;
    }

    // --- stack and memo ---
    case kPop:
      if (stack_.size() > frame_base()) {
        stack_.pop_back();
      } else {
        stack_.resize(pop_mark());  // POP on an empty frame discards the frame (as CPython)
      }
      break;
    case kDup: {
      const Value v = top();
      stack_.push_back(v);
      break;
    }
    case kMark:
      marks_.push_back(stack_.size());
      frame_ = stack_.size();
      break;
    case kPopMark: stack_.resize(pop_mark()); break;
    case kGet: stack_.push_back(memo_get(text_key())); break;
    case kBinGet: stack_.push_back(memo_get(u8())); break;
    case kLongBinGet: stack_.push_back(memo_get(u32le())); break;
    case kPut: {
      const uint64_t key = text_key();
      memo_put(key, top());
      break;
    }
    case kBinPut: {
      const uint8_t key = u8();
      memo_put(key, top());
      break;
    }
    case kLongBinPut: {
      const uint32_t key = u32le();
      memo_put(key, top());
      break;
    }
    case kMemoize: memo_put(memo_count_, top()); break;

    // --- classes, objects, references ---
    case kGlobal: {
      const std::string_view module = line();
      const std::string_view name = line();
      stack_.push_back(c_.global(module, name));
      break;
    }
    case kStackGlobal: {
      require(2);
      const Value name = pop();
      const Value module = pop();
      stack_.push_back(c_.stack_global(module, name));
      break;
    }
    case kReduce: {
      require(2);
      const Value args = pop();
      const Value callable = pop();
      stack_.push_back(c_.reduce(callable, args));
      break;
    }
    case kNewObj: {
      require(2);
      const Value args = pop();
      const Value cls = pop();
      stack_.push_back(c_.newobj(cls, args));
      break;
    }
    case kNewObjEx: {
      require(3);
      const Value kwargs = pop();
      const Value args = pop();
      const Value cls = pop();
      stack_.push_back(c_.newobj_ex(cls, args, kwargs));
      break;
    }
    case kBuild: {
      require(2);
      const Value state = pop();
      c_.build(stack_.back(), state);
      break;
    }
    case kInst: {
      const std::string_view module = line();
      const std::string_view name = line();
      const size_t k = pop_mark();
      const Value v = c_.inst(module, name, stack_.data() + k, stack_.size() - k);
      stack_.resize(k);
      stack_.push_back(v);
      break;
    }
    case kObj: {
      const size_t k = pop_mark();
      if (stack_.size() == k) fault("OBJ without a class");
      const Value v = c_.obj(stack_[k], stack_.data() + k + 1, stack_.size() - k - 1);
      stack_.resize(k);
      stack_.push_back(v);
      break;
    }
    case kPersId: stack_.push_back(c_.persid_text(line())); break;
    case kBinPersId: {
      const Value pid = pop();
      stack_.push_back(c_.persid(pid));
      break;
    }
    case kExt1:
    case kExt2:
    case kExt4: {
      const uint32_t code = op == kExt1 ? u8() : op == kExt2 ? u16le() : u32le();
      if (code == 0) fault("extension code 0");
      stack_.push_back(c_.ext(code));
      break;
    }
    case kNextBuffer: stack_.push_back(c_.buffer()); break;
    case kReadOnlyBuffer: top(); break;  // a no-op on a value that must exist

    default: fault("unknown opcode");
  }
}

}  // namespace relstore::pickle

#undef RELSTORE_INLINE
