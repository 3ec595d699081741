// The walker consumer of the JSON decoder: turns opcodes into a Tree. Everything here is
// inline because the walker calls it once per opcode.
#pragma once

#include <string_view>

#include "pickle/fault.h"
#include "pickle/oid_text.h"
#include "pickle/tree.h"
#include "relstore/types.h"

namespace relstore::pickle {

// The oid a persistent id names, by ZODB's rules (ZODB.serialize.referencesf): 8 bytes (or
// 8 ASCII characters), or a tuple whose first item is. Weak and cross-database references
// (lists) name none. The scanner applies the same rule to its own values (scanner.cc).
inline bool is_oid_bytes(const Node& n) {
  if (n.kind == Kind::kBytes || n.kind == Kind::kPy2Str) return n.a == 8;
  return n.kind == Kind::kStr && is_ascii_oid_text(n.text());
}

// The oid of a node for which is_oid_bytes() holds.
inline Oid oid_of(const Node& n) {
  return Oid(read_be64(reinterpret_cast<const unsigned char*>(n.u.p)));
}

class TreeBuilder {
 public:
  using Value = NodeId;
  static constexpr Value kEmpty = kNoNode;
  static bool is_empty(Value v) { return v == kNoNode; }

  explicit TreeBuilder(Tree& tree) : t_(tree) {}

  void at(uint32_t pos) { pos_ = pos; }

  Value none() { return add(Kind::kNone).id; }
  Value boolean(bool b) {
    auto [n, id] = add(Kind::kBool);
    n.u.i = b;
    return id;
  }
  Value int64(int64_t v) {
    auto [n, id] = add(Kind::kInt);
    n.u.i = v;
    return id;
  }
  Value float64(double v) {
    auto [n, id] = add(Kind::kFloat);
    n.u.f = v;
    return id;
  }
  Value bigint_le(std::string_view b) { return text(Kind::kBigLe, b); }
  Value bigint_text(bool negative, std::string_view digits) {
    const Value id = text(Kind::kBigText, digits);
    if (negative) t_.nodes[id].flags |= kNegative;
    return id;
  }
  Value str(std::string_view s) { return text(Kind::kStr, s); }
  Value py2str(std::string_view s) { return text(Kind::kPy2Str, s); }
  Value bytes(std::string_view s) { return text(Kind::kBytes, s); }
  Value bytearray(std::string_view s) { return text(Kind::kByteArray, s); }

  Value tuple(const Value* v, size_t n) { return fixed(Kind::kTuple, v, n); }
  Value frozenset(const Value* v, size_t n) { return fixed(Kind::kFrozenSet, v, n); }
  Value list(const Value* v, size_t n) { return growable(Kind::kList, v, n); }
  Value dict(const Value* v, size_t n) { return growable(Kind::kDict, v, n); }
  Value set() { return growable(Kind::kSet, nullptr, 0); }

  void append(Value target, const Value* v, size_t n) {
    Node& t = t_.nodes[target];
    if (t.kind == Kind::kList) return chain(t.a, t.b, v, n);
    if (t.kind == Kind::kInstance) return instance_items(t, ItemKind::kValues, v, n);
    fault("APPEND to a value that is not a list");
  }
  void setitems(Value target, const Value* v, size_t n) {
    Node& t = t_.nodes[target];
    if (t.kind == Kind::kDict) return chain(t.a, t.b, v, n);
    if (t.kind == Kind::kInstance) return instance_items(t, ItemKind::kPairs, v, n);
    fault("SETITEM on a value that is not a dict");
  }
  void additems(Value target, const Value* v, size_t n) {
    Node& t = t_.nodes[target];
    if (t.kind == Kind::kSet) return chain(t.a, t.b, v, n);
    if (t.kind == Kind::kInstance) return instance_items(t, ItemKind::kValues, v, n);
    fault("ADDITEMS on a value that is not a set");
  }

  Value global(std::string_view module, std::string_view name) {
    t_.globals.push_back({module, name});
    auto [n, id] = add(Kind::kGlobal);
    n.a = static_cast<uint32_t>(t_.globals.size() - 1);
    return id;
  }
  Value stack_global(Value module, Value name) {
    if (t_.nodes[module].kind != Kind::kStr || t_.nodes[name].kind != Kind::kStr) {
      fault("STACK_GLOBAL needs two str values");
    }
    return global(t_.nodes[module].text(), t_.nodes[name].text());
  }

  Value reduce(Value callable, Value args) { return instance(callable, args, kNoNode); }
  Value newobj(Value cls, Value args) { return instance(cls, args, kNoNode); }
  Value newobj_ex(Value cls, Value args, Value kwargs) { return instance(cls, args, kwargs); }
  Value inst(std::string_view module, std::string_view name, const Value* v, size_t n) {
    const Value args = tuple(v, n);
    return instance(global(module, name), args, kNoNode);
  }
  Value obj(Value cls, const Value* v, size_t n) { return instance(cls, tuple(v, n), kNoNode); }
  void build(Value target, Value state) {
    Node& t = t_.nodes[target];
    if (t.kind != Kind::kInstance) fault("BUILD on a value that is not an object");
    Instance& inst = t_.instances[t.a];
    chain(inst.state_head, inst.state_tail, &state, 1);
  }

  Value persid_text(std::string_view text) { return persid(py2str(text)); }
  Value persid(Value pid) {
    const Node& p = t_.nodes[pid];
    if (is_oid_bytes(p)) {
      t_.refs.push_back(oid_of(p));
    } else if (p.kind == Kind::kTuple && p.b >= 1 && is_oid_bytes(t_.nodes[t_.slots[p.a]])) {
      t_.refs.push_back(oid_of(t_.nodes[t_.slots[p.a]]));
    }
    auto [n, id] = add(Kind::kPersRef);
    n.a = pid;
    return id;
  }
  Value ext(uint32_t code) {
    auto [n, id] = add(Kind::kExt);
    n.u.i = code;
    return id;
  }
  Value buffer() { return add(Kind::kBuffer).id; }

 private:
  struct Added {
    Node& node;
    Value id;
  };
  Added add(Kind kind) {
    const Value id = static_cast<Value>(t_.nodes.size());
    Node& n = t_.nodes.emplace_back();
    n.kind = kind;
    n.flags = 0;
    n.pos = pos_;
    n.a = 0;
    n.b = 0;
    n.u.i = 0;
    return {n, id};
  }
  Value text(Kind kind, std::string_view s) {
    auto [n, id] = add(kind);
    n.u.p = s.data();
    n.a = static_cast<uint32_t>(s.size());
    return id;
  }
  Value fixed(Kind kind, const Value* v, size_t n) {
    const uint32_t start = static_cast<uint32_t>(t_.slots.size());
    t_.slots.insert(t_.slots.end(), v, v + n);
    auto [node, id] = add(kind);
    node.a = start;
    node.b = static_cast<uint32_t>(n);
    return id;
  }
  Value growable(Kind kind, const Value* v, size_t n) {
    auto [node, id] = add(kind);
    node.a = node.b = kNoSeg;
    chain(node.a, node.b, v, n);
    return id;
  }
  Value instance(Value cls, Value args, Value kwargs) {
    t_.instances.push_back({cls, args, kwargs, kNoSeg, kNoSeg, kNoSeg, kNoSeg, ItemKind::kNone});
    auto [n, id] = add(Kind::kInstance);
    n.a = static_cast<uint32_t>(t_.instances.size() - 1);
    return id;
  }
  void instance_items(Node& t, ItemKind kind, const Value* v, size_t n) {
    Instance& inst = t_.instances[t.a];
    if (inst.items != ItemKind::kNone && inst.items != kind) {
      fault("an object given both list items and dict items");
    }
    inst.items = kind;
    chain(inst.item_head, inst.item_tail, v, n);
  }
  // Appends n slots as a new segment at the end of the chain head..tail.
  void chain(uint32_t& head, uint32_t& tail, const Value* v, size_t n) {
    if (n == 0) return;
    const uint32_t start = static_cast<uint32_t>(t_.slots.size());
    t_.slots.insert(t_.slots.end(), v, v + n);
    t_.segs.push_back({start, static_cast<uint32_t>(n), kNoSeg});
    const uint32_t s = static_cast<uint32_t>(t_.segs.size() - 1);
    if (head == kNoSeg) {
      head = s;
    } else {
      t_.segs[tail].next = s;
    }
    tail = s;
  }

  Tree& t_;
  uint32_t pos_ = 0;
};

}  // namespace relstore::pickle
