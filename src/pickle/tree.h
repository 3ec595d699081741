// The decoded value graph of one record: flat vectors of small nodes that are reused from
// record to record. Strings point into the record (or into the ByteArena), never copied.
// Containers that the pickle fills in several steps (APPENDS, SETITEMS, BUILD) keep a chain
// of segments into one shared slot vector instead of a vector each.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "relstore/types.h"

namespace relstore::pickle {

using NodeId = uint32_t;
inline constexpr uint32_t kNoSeg = UINT32_MAX;

enum class Kind : uint8_t {
  kNone,
  kBool,     // u.i: 0 or 1
  kInt,      // u.i
  kBigLe,    // two's complement little-endian bytes (LONG1/LONG4 beyond 64 bits)
  kBigText,  // decimal digits without leading zeros; kNegative flag for the sign
  kFloat,    // u.f
  kStr,      // Python str as UTF-8 (possibly with surrogates or invalid bytes)
  kPy2Str,   // Python 2 str: bytes of unknown encoding
  kBytes,
  kByteArray,
  kTuple,      // a: first slot, b: count
  kList,       // a: first segment, b: last segment (kNoSeg when empty)
  kDict,       // as kList; slots hold key, value, key, value…
  kSet,        // as kList
  kFrozenSet,  // as kTuple
  kGlobal,     // a: index into Tree::globals
  kInstance,   // a: index into Tree::instances
  kPersRef,    // a: the persistent id's node
  kExt,        // u.i: extension code
  kBuffer,     // out-of-band buffer (protocol 5), which ZODB never uses
};

enum NodeFlags : uint8_t {
  kNegative = 1,  // kBigText
  kOnPath = 2,    // being written right now (cycle detection)
  kHasId = 4,     // target of a cycle: written with "::id"
};

struct Node {
  Kind kind;
  uint8_t flags;
  uint16_t unused;
  uint32_t pos;  // byte offset of the opcode that made the value, for error messages
  uint32_t a;
  uint32_t b;
  union {
    int64_t i;
    double f;
    const char* p;  // string kinds: bytes, with `a` the length
  } u;

  std::string_view text() const { return {u.p, a}; }
};

struct Seg {
  uint32_t start;  // index into Tree::slots
  uint32_t count;
  uint32_t next;  // next segment or kNoSeg
};

struct GlobalRef {
  std::string_view module;
  std::string_view name;
};

enum class ItemKind : uint8_t { kNone, kPairs, kValues };

// An object made by REDUCE, NEWOBJ, NEWOBJ_EX, INST or OBJ.
struct Instance {
  NodeId cls;                       // the callable / class
  NodeId args;                      // a kTuple node (or other value for REDUCE with odd arguments)
  NodeId kwargs;                    // NEWOBJ_EX keyword arguments, or kNoNode
  uint32_t state_head, state_tail;  // BUILD states, in order
  uint32_t item_head, item_tail;    // SETITEMS pairs or APPENDS values applied to it
  ItemKind items;
};

inline constexpr NodeId kNoNode = UINT32_MAX;

struct Tree {
  std::vector<Node> nodes;
  std::vector<NodeId> slots;
  std::vector<Seg> segs;
  std::vector<GlobalRef> globals;
  std::vector<Instance> instances;
  std::vector<Oid> refs;

  void clear() {
    nodes.clear();
    slots.clear();
    segs.clear();
    globals.clear();
    instances.clear();
    refs.clear();
  }

  const Node& operator[](NodeId id) const { return nodes[id]; }
  Node& operator[](NodeId id) { return nodes[id]; }

  // Calls f(NodeId) for every slot of a segment chain.
  template <class F>
  void for_each(uint32_t head, F&& f) const {
    for (uint32_t s = head; s != kNoSeg; s = segs[s].next) {
      const Seg& seg = segs[s];
      for (uint32_t i = 0; i < seg.count; ++i) f(slots[seg.start + i]);
    }
  }
  // Number of slots in a segment chain.
  size_t chain_size(uint32_t head) const {
    size_t n = 0;
    for (uint32_t s = head; s != kNoSeg; s = segs[s].next) n += segs[s].count;
    return n;
  }
  // The tuple's (or frozenset's) items.
  const NodeId* items(const Node& n) const { return slots.data() + n.a; }
};

}  // namespace relstore::pickle
