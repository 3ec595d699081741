// Writes a record's decoded value graph as JSON text by the mapping of json-mirror.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pickle/json_out.h"
#include "pickle/known.h"
#include "pickle/tree.h"
#include "relstore/pickle.h"

namespace relstore::pickle {

// Working memory of the emitter, kept between records.
struct EmitScratch {
  struct Span {
    uint32_t start, size;  // of a rendered set member, relative to the set's first member
  };
  std::vector<Span> spans;
  std::string text;    // copies of rendered set members while they are sorted
  std::string latin1;  // bytes recovered from a str (_codecs.encode)
  std::string digits;  // big integers
  std::vector<uint32_t> limbs;
  // Decimal text of the large integers written so far in this record, by their payload's
  // address: one memoized integer fetched a thousand times is converted once (the
  // walker's budget counts each integer once).
  std::unordered_map<const char*, std::string> big_decimals;
  std::vector<uint32_t> cycle_ids;  // per node, for cycle targets
};

class Emitter {
 public:
  Emitter(Tree& tree, JsonOut& out, EmitScratch& scratch, const DecodeOptions& options,
          size_t max_output)
      : t_(tree), out_(out), s_(scratch), opt_(options), max_output_(max_output) {}

  // Writes the state of a record whose class has BTrees kind `btree`. A value that contains
  // itself is written with {"::->": n} references; the first time such a cycle is found the
  // output already holds the target without its "::id", so the state is written again.
  // Throws Fault; fault_offset() then names the value being written.
  void state(NodeId root, BTreeKind btree);

  uint32_t fault_offset() const { return pos_; }

 private:
  void write_state(NodeId root, BTreeKind btree);
  void value(NodeId id, unsigned depth);
  void container(NodeId id, unsigned depth);
  void scalar(const Node& n);
  void big_le(std::string_view le);
  void big_text(const Node& n);
  void py2_string(std::string_view s);
  void bytes_value(std::string_view s);
  void sequence(NodeId id, unsigned depth);
  void dict(NodeId id, unsigned depth);
  void sorted_members(const NodeId* items, size_t n, unsigned depth);
  void sorted_chain(uint32_t head, unsigned depth);
  void finish_sorted(size_t base, size_t region);
  void open_shared(NodeId id);

  // Dicts: true when every key can be a JSON object key; keys are written stringified.
  bool keys_stringable(const NodeId* pairs, size_t n) const;
  bool key_stringable(NodeId k) const;
  void key(NodeId k);
  void members(const NodeId* pairs, size_t n, unsigned depth, bool& first);
  void pair_list(const NodeId* pairs, size_t n, unsigned depth);

  // emit_instance.cc
  void instance(NodeId id, unsigned depth);
  bool special_instance(NodeId id, Known k, const NodeId* args, size_t nargs, unsigned depth);
  // `base_state`: the dict or list a copyreg._reconstructor(cls, dict|list, state) gives
  // the instance (protocols 0 and 1 pickle dict and list subclasses so).
  void generic_instance(NodeId id, NodeId cls, Known k, const NodeId* args, size_t nargs,
                        NodeId kwargs, unsigned depth, NodeId base_state = kNoNode);
  bool datetime_like(Known k, const NodeId* args, size_t nargs, unsigned depth);
  bool tz_offset(NodeId tz, int64_t& micro) const;
  // A timedelta(days, seconds, microseconds) within a day either way, in microseconds.
  bool offset_micro(NodeId timedelta, int64_t& micro) const;
  // The value of `key` in an instance's BUILD state dicts (the last one wins), if any.
  NodeId state_value(const Instance& in, std::string_view key) const;
  bool decimal(const NodeId* args, size_t nargs);
  void uuid_hex(NodeId id);
  void persistent(NodeId id, unsigned depth);
  void global(const GlobalRef& g);
  // The bytes a value stands for: bytes, Python 2 str, or _codecs.encode(str, "latin1").
  bool bytes_of(NodeId id, std::string_view& out);
  bool dotted_name(NodeId id, std::string_view& module, std::string_view& name) const;
  Known known(NodeId callable) const;
  bool int_value(NodeId id, int64_t& v) const;

  // emit_btree.cc
  bool btree_state(NodeId root, BTreeKind kind);
  bool bucket_items(NodeId items, bool set);

  void check_output() const;
  bool tuple_items(NodeId id, const NodeId*& items, size_t& n) const;

  Tree& t_;
  JsonOut& out_;
  EmitScratch& s_;
  const DecodeOptions& opt_;
  size_t max_output_;
  // Bytes of set text rewritten after sorting: nested sets rewrite their members' text
  // once per level, which the output limit alone does not bound.
  size_t sort_work_ = 0;
  // The frame state() began in: on a stack that is not the thread's, the recursion's
  // budget is counted from it.
  const char* entry_frame_ = nullptr;
  uint32_t pos_ = 0;
  uint32_t next_cycle_id_ = 0;
  bool new_targets_ = false;
};

}  // namespace relstore::pickle
