// Core of the emitter: plain values, containers, dict keys, sorted sets and cycles.
#include "pickle/emitter.h"

#include <pthread.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "pickle/bigint.h"
#include "pickle/fault.h"

namespace relstore::pickle {
namespace {

// This thread's stack, [low, high), with room kept at its low end for what runs below the
// last check (the frames between two levels and the JSON writer): a quarter of the stack,
// at most 64 KiB. Stacks grow down on every platform relstore builds for. Read once per
// thread (pthread_getattr_np reads /proc/self/maps for the main thread).
struct StackBounds {
  const char* low = nullptr;
  const char* floor = nullptr;  // the lowest frame address the emitter recurses to
  const char* high = nullptr;
};

const StackBounds& stack_bounds() {
  thread_local const StackBounds bounds = [] {
    StackBounds out;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      void* addr = nullptr;
      size_t size = 0;
      if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
        out.low = static_cast<const char*>(addr);
        out.floor = out.low + std::min<size_t>(64 * 1024, size / 4);
        out.high = out.low + size;
      }
      pthread_attr_destroy(&attr);
    }
    return out;
  }();
  return bounds;
}

// On a stack other than the thread's (a coroutine or fiber), whose size is unknown, the
// writer may go this far below where the decode began: nesting a record would have to be
// hostile to need it (lists take about 160 bytes a level, instances up to 500).
constexpr size_t kForeignStackBudget = 48 * 1024;

// True when the current frame is near the end of the thread's stack or, on a stack of
// its own, past the budget below `entry` (the frame the decode began in).
bool stack_nearly_full(const char* entry) {
  const StackBounds& b = stack_bounds();
  const char* frame = static_cast<const char*>(__builtin_frame_address(0));
  const bool on_thread_stack = frame >= b.low && frame < b.high;
  if (on_thread_stack) return frame < b.floor;
  return entry > frame && static_cast<size_t>(entry - frame) > kForeignStackBudget;
}

// Sort classes of rendered JSON values, by their first character.
int rank_of(char c) {
  switch (c) {
    case 'n':
      return 0;  // null
    case 't':
    case 'f':
      return 1;  // booleans
    case '"':
      return 3;  // strings
    case '[':
      return 4;
    case '{':
      return 5;
    default:
      return 2;  // numbers
  }
}

bool plain_integer(std::string_view s, int64_t& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

double number_value(std::string_view s) {
  double d = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (ec == std::errc::result_out_of_range) return s[0] == '-' ? -HUGE_VAL : HUGE_VAL;
  return d;
}

// Reads a rendered string's characters with its escapes undone, a byte at a time, as
// UTF-8: byte order is then the order of code points, which is how Python sorts str. The
// writer escapes only ASCII (json_escape.cc): quotes, backslashes and control characters.
// Compared as they are read, two members are ordered without a copy of either.
class StringChars {
 public:
  explicit StringChars(std::string_view rendered) : s_(rendered) {}

  // The next byte, or -1 after the last.
  int next() {
    if (i_ + 1 >= s_.size()) return -1;  // the closing quote
    const char c = s_[i_++];
    if (c != '\\') return static_cast<unsigned char>(c);
    const char e = s_[i_++];
    switch (e) {
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      case 'b':
        return '\b';
      case 'f':
        return '\f';
      case 'u': {
        unsigned v = 0;
        std::from_chars(s_.data() + i_, s_.data() + i_ + 4, v, 16);
        i_ += 4;
        return static_cast<int>(v & 0xff);
      }
      default:
        return static_cast<unsigned char>(e);  // \" and \\ stand for themselves
    }
  }

 private:
  std::string_view s_;
  size_t i_ = 1;  // past the opening quote
};

bool string_less(std::string_view x, std::string_view y) {
  StringChars a(x), b(y);
  for (;;) {
    const int ca = a.next(), cb = b.next();
    if (ca != cb) return ca < cb;
    if (ca < 0) return false;
  }
}

// Orders rendered set members: by kind, numbers by value, strings by their characters,
// everything else by its text.
bool member_less(std::string_view x, std::string_view y) {
  const int rx = rank_of(x[0]), ry = rank_of(y[0]);
  if (rx != ry) return rx < ry;
  if (rx == 2) {
    int64_t ix, iy;
    if (plain_integer(x, ix) && plain_integer(y, iy)) return ix < iy;
    const double dx = number_value(x), dy = number_value(y);
    if (dx != dy) return dx < dy;
  }
  if (rx == 3) return string_less(x, y);
  return x < y;
}

}  // namespace

void Emitter::state(NodeId root, BTreeKind btree) {
  entry_frame_ = static_cast<const char*>(__builtin_frame_address(0));
  const size_t start = out_.size();
  s_.big_decimals.clear();
  new_targets_ = false;
  write_state(root, btree);
  // Written again until a pass finds no new cycle target, so that every target opens with
  // its "::id". Mostly the second pass: a target written in another form (a set or a
  // datetime that contains itself is written as a generic instance) can take the walk
  // through other values and find one more.
  for (int pass = 2; new_targets_; ++pass) {
    if (pass > 8) fault("cycles that change the walk at every pass");
    out_.truncate(start);
    new_targets_ = false;
    write_state(root, btree);
  }
  check_output();
}

void Emitter::write_state(NodeId root, BTreeKind btree) {
  pos_ = t_[root].pos;
  if (btree != BTreeKind::kNone && btree_state(root, btree)) return;
  value(root, 0);
}

void Emitter::check_output() const {
  if (out_.size() > max_output_) {
    fault("JSON text over the limit of " + std::to_string(max_output_) + " bytes");
  }
}

bool Emitter::tuple_items(NodeId id, const NodeId*& items, size_t& n) const {
  const Node& node = t_[id];
  if (node.kind != Kind::kTuple) return false;
  items = t_.items(node);
  n = node.b;
  return true;
}

void Emitter::value(NodeId id, unsigned depth) {
  check_output();
  const Node& n = t_[id];
  pos_ = n.pos;
  switch (n.kind) {
    case Kind::kTuple:
    case Kind::kList:
    case Kind::kDict:
    case Kind::kSet:
    case Kind::kFrozenSet:
    case Kind::kInstance:
    case Kind::kPersRef:
      return container(id, depth);
    default:
      return scalar(n);
  }
}

void Emitter::scalar(const Node& n) {
  switch (n.kind) {
    case Kind::kNone:
      return out_.put("null");
    case Kind::kBool:
      return out_.put(n.u.i ? "true" : "false");
    case Kind::kInt:
      return out_.put_int(n.u.i);
    case Kind::kFloat:
      return out_.put_float(n.u.f);
    case Kind::kBigLe:
      return big_le(n.text());
    case Kind::kBigText:
      return big_text(n);
    case Kind::kStr:
      return out_.put_string(n.text(), opt_.replace_nul);
    case Kind::kPy2Str:
      return py2_string(n.text());
    case Kind::kBytes:
    case Kind::kByteArray:
      return bytes_value(n.text());
    case Kind::kGlobal:
      return global(t_.globals[n.a]);
    case Kind::kExt:
      out_.put("{\"::\":\"ext\",\"code\":");
      out_.put_int(n.u.i);
      return out_.put('}');
    case Kind::kBuffer:
      return out_.put("{\"::\":\"buffer\"}");
    default:
      fault("internal: not a scalar");
  }
}

void Emitter::big_le(std::string_view le) {
  // Integers up to a few hundred digits convert faster than a lookup would cost.
  constexpr size_t kCachedFrom = 128;
  if (le.size() < kCachedFrom) {
    bigint_le_to_decimal(le, s_.digits, s_.limbs);
    return out_.put(s_.digits);
  }
  auto [it, added] = s_.big_decimals.try_emplace(le.data());
  if (added) {
    bigint_le_to_decimal(le, s_.digits, s_.limbs);
    it->second = s_.digits;
  }
  out_.put(it->second);
}

void Emitter::big_text(const Node& n) {
  if (n.flags & kNegative) out_.put('-');
  out_.put(n.text());
}

void Emitter::py2_string(std::string_view s) {
  switch (opt_.py2_str) {
    case Py2StrMode::kAsciiOrHex:
      if (is_plain_ascii(s)) return out_.put_string(s, opt_.replace_nul);
      break;
    case Py2StrMode::kUtf8:
      if (is_valid_utf8(s)) return out_.put_string(s, opt_.replace_nul);
      break;
    case Py2StrMode::kLatin1:
      return out_.put_latin1_string(s, opt_.replace_nul);
  }
  out_.put("{\"::\":\"hex\",\"hex\":\"");
  out_.put_hex(s);
  out_.put("\"}");
}

void Emitter::bytes_value(std::string_view s) {
  if (is_plain_ascii(s)) return out_.put_string(s, opt_.replace_nul);
  out_.put("{\"::\":\"hex\",\"hex\":\"");
  out_.put_hex(s);
  out_.put("\"}");
}

void Emitter::global(const GlobalRef& g) {
  out_.put("{\"::\":\"global\",\"name\":\"");
  out_.put_escaped(g.module, opt_.replace_nul);
  out_.put('.');
  out_.put_escaped(g.name, opt_.replace_nul);
  out_.put("\"}");
}

void Emitter::container(NodeId id, unsigned depth) {
  Node& n = t_[id];
  if (depth >= kPickleMaxDepth) fault("values nested deeper than 1000 levels");
  // Each level is a few frames of recursion, up to about 500 bytes through instances: a
  // thread with a small stack can run out within the depth limit.
  if (stack_nearly_full(entry_frame_)) fault("values nested too deeply for this thread's stack");
  if (n.flags & kOnPath) {
    // The value contains itself: refer to it by an id its first writing will carry.
    if (!(n.flags & kHasId)) {
      n.flags |= kHasId;
      if (s_.cycle_ids.size() < t_.nodes.size()) s_.cycle_ids.resize(t_.nodes.size());
      s_.cycle_ids[id] = next_cycle_id_++;
      new_targets_ = true;
    }
    out_.put("{\"::->\":");
    out_.put_uint(s_.cycle_ids[id]);
    out_.put('}');
    return;
  }
  n.flags |= kOnPath;
  switch (n.kind) {
    case Kind::kTuple:
    case Kind::kList:
      sequence(id, depth);
      break;
    case Kind::kDict:
      dict(id, depth);
      break;
    case Kind::kSet:
    case Kind::kFrozenSet: {
      const bool shared = n.flags & kHasId;
      if (shared) open_shared(id);
      if (n.kind == Kind::kSet) {
        sorted_chain(n.a, depth);
      } else {
        sorted_members(t_.items(n), n.b, depth);
      }
      if (shared) out_.put('}');
      break;
    }
    case Kind::kInstance:
      instance(id, depth);
      break;
    case Kind::kPersRef:
      persistent(id, depth);
      break;
    default:
      fault("internal: not a container");
  }
  n.flags &= static_cast<uint8_t>(~kOnPath);
}

void Emitter::open_shared(NodeId id) {
  // Lists and sets are not JSON objects, so a cycle target among them is wrapped.
  out_.put("{\"::\":\"shared\",\"::id\":");
  out_.put_uint(s_.cycle_ids[id]);
  out_.put(",\"value\":");
}

void Emitter::sequence(NodeId id, unsigned depth) {
  const Node& n = t_[id];
  const bool shared = n.flags & kHasId;
  if (shared) open_shared(id);
  out_.put('[');
  bool first = true;
  auto item = [&](NodeId c) {
    if (!first) out_.put(',');
    first = false;
    value(c, depth + 1);
  };
  if (n.kind == Kind::kTuple) {
    const NodeId* items = t_.items(n);
    for (uint32_t i = 0; i < n.b; ++i) item(items[i]);
  } else {
    t_.for_each(n.a, item);
  }
  out_.put(']');
  if (shared) out_.put('}');
}

bool Emitter::key_stringable(NodeId k) const {
  const Node& n = t_[k];
  switch (n.kind) {
    case Kind::kStr:
    case Kind::kInt:
    case Kind::kBigLe:
    case Kind::kBigText:
    case Kind::kFloat:
    case Kind::kBool:
    case Kind::kNone:
      return true;
    case Kind::kPy2Str:
      switch (opt_.py2_str) {
        case Py2StrMode::kAsciiOrHex:
          return is_plain_ascii(n.text());
        case Py2StrMode::kUtf8:
          return is_valid_utf8(n.text());
        case Py2StrMode::kLatin1:
          return true;
      }
      return false;
    default:
      return false;
  }
}

bool Emitter::keys_stringable(const NodeId* pairs, size_t n) const {
  for (size_t i = 0; i < n; i += 2) {
    if (!key_stringable(pairs[i])) return false;
  }
  return true;
}

void Emitter::key(NodeId k) {
  const Node& n = t_[k];
  pos_ = n.pos;
  switch (n.kind) {
    case Kind::kStr:
      return out_.put_string(n.text(), opt_.replace_nul);
    case Kind::kPy2Str:
      return py2_string(n.text());
    case Kind::kNone:
      return out_.put("\"null\"");
    case Kind::kBool:
      return out_.put(n.u.i ? "\"true\"" : "\"false\"");
    case Kind::kFloat:
      out_.put('"');
      out_.put_float_text(n.u.f);
      return out_.put('"');
    default:  // the integer kinds
      out_.put('"');
      scalar(n);
      return out_.put('"');
  }
}

void Emitter::members(const NodeId* pairs, size_t n, unsigned depth, bool& first) {
  for (size_t i = 0; i < n; i += 2) {
    if (!first) out_.put(',');
    first = false;
    key(pairs[i]);
    out_.put(':');
    value(pairs[i + 1], depth + 1);
  }
}

void Emitter::pair_list(const NodeId* pairs, size_t n, unsigned depth) {
  for (size_t i = 0; i < n; i += 2) {
    if (i) out_.put(',');
    out_.put('[');
    value(pairs[i], depth + 1);
    out_.put(',');
    value(pairs[i + 1], depth + 1);
    out_.put(']');
  }
}

void Emitter::dict(NodeId id, unsigned depth) {
  const Node& n = t_[id];
  // Every segment holds whole key/value pairs: SETITEM, SETITEMS and DICT add pairs only.
  bool stringable = true;
  for (uint32_t s = n.a; s != kNoSeg && stringable; s = t_.segs[s].next) {
    stringable = keys_stringable(&t_.slots[t_.segs[s].start], t_.segs[s].count);
  }
  const bool has_id = n.flags & kHasId;
  if (stringable) {
    out_.put('{');
    bool first = true;
    if (has_id) {
      out_.put("\"::id\":");
      out_.put_uint(s_.cycle_ids[id]);
      first = false;
    }
    for (uint32_t s = n.a; s != kNoSeg; s = t_.segs[s].next) {
      members(&t_.slots[t_.segs[s].start], t_.segs[s].count, depth, first);
    }
    out_.put('}');
    return;
  }
  out_.put("{\"::\":\"dict\",");
  if (has_id) {
    out_.put("\"::id\":");
    out_.put_uint(s_.cycle_ids[id]);
    out_.put(',');
  }
  out_.put("\"items\":[");
  bool first = true;
  for (uint32_t s = n.a; s != kNoSeg; s = t_.segs[s].next) {
    if (!first && t_.segs[s].count) out_.put(',');
    first = false;
    pair_list(&t_.slots[t_.segs[s].start], t_.segs[s].count, depth);
  }
  out_.put("]}");
}

// Sets are written in a stable order whatever order the pickle lists them in (it follows
// Python's per-process string hashing): each member is rendered, then the rendered texts
// are sorted in place.
void Emitter::sorted_members(const NodeId* items, size_t n, unsigned depth) {
  const size_t base = s_.spans.size();
  out_.put('[');
  const size_t region = out_.size();
  for (size_t i = 0; i < n; ++i) {
    const size_t start = out_.size();
    value(items[i], depth + 1);
    s_.spans.push_back(
        {static_cast<uint32_t>(start - region), static_cast<uint32_t>(out_.size() - start)});
  }
  finish_sorted(base, region);
}

void Emitter::sorted_chain(uint32_t head, unsigned depth) {
  const size_t base = s_.spans.size();
  out_.put('[');
  const size_t region = out_.size();
  t_.for_each(head, [&](NodeId c) {
    const size_t start = out_.size();
    value(c, depth + 1);
    s_.spans.push_back(
        {static_cast<uint32_t>(start - region), static_cast<uint32_t>(out_.size() - start)});
  });
  finish_sorted(base, region);
}

void Emitter::finish_sorted(size_t base, size_t region) {
  const auto first = s_.spans.begin() + static_cast<std::ptrdiff_t>(base);
  if (s_.spans.size() - base > 1) {
    const char* text = out_.data() + region;
    auto less = [text](const EmitScratch::Span& a, const EmitScratch::Span& b) {
      return member_less({text + a.start, a.size}, {text + b.start, b.size});
    };
    // Sets in records are small: insertion sort is stable and, unlike std::stable_sort,
    // needs no buffer (the comparison allocates nothing either). Big ones get a merge sort.
    if (s_.spans.end() - first <= 32) {
      for (auto i = first + 1; i != s_.spans.end(); ++i) {
        const EmitScratch::Span v = *i;
        auto j = i;
        for (; j != first && less(v, *(j - 1)); --j) *j = *(j - 1);
        *j = v;
      }
    } else {
      std::stable_sort(first, s_.spans.end(), less);
    }
    sort_work_ += out_.size() - region;
    if (sort_work_ / 4 > max_output_) {
      fault("sets nested in sets rewrite more than 4 times the output limit of " +
            std::to_string(max_output_) + " bytes");
    }
    s_.text.assign(text, out_.size() - region);
    out_.truncate(region);
    bool comma = false;
    for (auto it = first; it != s_.spans.end(); ++it) {
      if (comma) out_.put(',');
      comma = true;
      out_.put(std::string_view(s_.text.data() + it->start, it->size));
    }
  }
  s_.spans.erase(first, s_.spans.end());
  out_.put(']');
}

}  // namespace relstore::pickle
