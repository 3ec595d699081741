// scan_references: the same walker as the decoder with a consumer that remembers only what
// a persistent id needs — is a value 8 bytes, or a tuple starting with 8 bytes — so no value
// graph and no JSON is built.
#include <algorithm>

#include "pickle/arena.h"
#include "pickle/oid_text.h"
#include "pickle/walker.h"
#include "relstore/pickle.h"

namespace relstore {
namespace {

class RefConsumer {
 public:
  enum Tag : uint8_t { kOther, kOidBytes, kOidTuple, kUnset };
  struct Value {
    Tag tag;
    uint64_t oid;
  };
  static constexpr Value kEmpty{kUnset, 0};
  static bool is_empty(Value v) { return v.tag == kUnset; }

  explicit RefConsumer(std::vector<Oid>& refs) : refs_(refs) {}

  void at(uint32_t) {}

  static Value other() { return {kOther, 0}; }
  // Same rule as pickle::is_oid_bytes: bytes or a Python 2 str of exactly 8 bytes (or a
  // str of 8 ASCII characters, str() above).
  static Value byte_string(std::string_view s) {
    if (s.size() != 8) return other();
    return {kOidBytes, read_be64(reinterpret_cast<const unsigned char*>(s.data()))};
  }

  Value none() { return other(); }
  Value boolean(bool) { return other(); }
  Value int64(int64_t) { return other(); }
  Value float64(double) { return other(); }
  Value bigint_le(std::string_view) { return other(); }
  Value bigint_text(bool, std::string_view) { return other(); }
  Value str(std::string_view s) { return pickle::is_ascii_oid_text(s) ? byte_string(s) : other(); }
  Value py2str(std::string_view s) { return byte_string(s); }
  Value bytes(std::string_view s) { return byte_string(s); }
  Value bytearray(std::string_view) { return other(); }
  Value tuple(const Value* v, size_t n) {
    if (n >= 1 && v[0].tag == kOidBytes) return {kOidTuple, v[0].oid};
    return other();
  }
  Value frozenset(const Value*, size_t) { return other(); }
  Value list(const Value*, size_t) { return other(); }
  Value dict(const Value*, size_t) { return other(); }
  Value set() { return other(); }
  void append(Value, const Value*, size_t) {}
  void setitems(Value, const Value*, size_t) {}
  void additems(Value, const Value*, size_t) {}
  Value global(std::string_view, std::string_view) { return other(); }
  Value stack_global(Value, Value) { return other(); }
  Value reduce(Value, Value) { return other(); }
  Value newobj(Value, Value) { return other(); }
  Value newobj_ex(Value, Value, Value) { return other(); }
  Value inst(std::string_view, std::string_view, const Value*, size_t) { return other(); }
  Value obj(Value, const Value*, size_t) { return other(); }
  void build(Value, Value) {}
  Value persid_text(std::string_view text) { return persid(byte_string(text)); }
  Value persid(Value pid) {
    if (pid.tag == kOidBytes || pid.tag == kOidTuple) refs_.push_back(Oid(pid.oid));
    return other();
  }
  Value ext(uint32_t) { return other(); }
  Value buffer() { return other(); }

 private:
  std::vector<Oid>& refs_;
};

}  // namespace

std::vector<Oid> scan_references(std::string_view record) {
  // Per thread, so that scanning every record of a pack allocates once, not per record.
  struct Context {
    pickle::ByteArena arena;
    std::vector<Oid> refs;
    RefConsumer consumer{refs};
    pickle::Walker<RefConsumer> walker{consumer, arena};
  };
  thread_local Context c;
  c.refs.clear();
  c.arena.reset();
  c.walker.reset();
  size_t pos = 0;
  c.walker.run(record, pos);  // the class pickle holds no references but fills the memo
  if (pos >= record.size()) {
    throw PickleError(pickle::describe_error("record has no state pickle", pos, -1), pos, -1);
  }
  c.walker.run(record, pos);
  std::vector<Oid> refs = c.refs;
  std::sort(refs.begin(), refs.end());
  refs.erase(std::unique(refs.begin(), refs.end()), refs.end());
  return refs;
}

}  // namespace relstore
