// Record states of the BTrees package. Their __getstate__ tuples are meaningless as JSON
// arrays, so they are written as {"::items"…}, {"::keys"…} or {"::children"…}. A state that
// does not have the expected shape is written as a plain value instead.
#include "pickle/emitter.h"

namespace relstore::pickle {

bool Emitter::btree_state(NodeId root, BTreeKind kind) {
  if (t_[root].kind == Kind::kNone) {  // an empty tree or set
    out_.put("null");
    return true;
  }
  const NodeId* st;
  size_t n;
  if (!tuple_items(root, st, n)) return false;
  const NodeId* items;
  size_t count;
  switch (kind) {
    case BTreeKind::kBucket:
    case BTreeKind::kSet: {
      // ((k1, v1, k2, v2, …),) or with the next bucket: (items, next_bucket)
      if (n < 1 || n > 2 || !tuple_items(st[0], items, count)) return false;
      if (kind == BTreeKind::kBucket && count % 2) return false;
      if (kind == BTreeKind::kBucket && count == 0 && n == 1) {
        out_.put("null");  // an empty bucket, as an empty tree (json-mirror.md)
        return true;
      }
      out_.put('{');
      bucket_items(st[0], kind == BTreeKind::kSet);
      if (n == 2) {
        out_.put(",\"::next\":");
        value(st[1], 1);
      }
      out_.put('}');
      return true;
    }
    case BTreeKind::kTree:
    case BTreeKind::kTreeSet: {
      if (n == 1) {
        // A tree small enough to keep its only bucket inline: ((bucket_state,),) where
        // bucket_state is (items,).
        const NodeId* inner;
        size_t m;
        const NodeId* bucket;
        size_t b;
        if (!tuple_items(st[0], inner, m) || m != 1 || !tuple_items(inner[0], bucket, b) ||
            b != 1 || !tuple_items(bucket[0], items, count)) {
          return false;
        }
        if (kind == BTreeKind::kTree && count % 2) return false;
        out_.put('{');
        bucket_items(bucket[0], kind == BTreeKind::kTreeSet);
        out_.put('}');
        return true;
      }
      // ((child0, key1, child1, …, childN), first_bucket): children are persistent refs.
      if (n != 2 || !tuple_items(st[0], items, count)) return false;
      out_.put("{\"::children\":[");
      for (size_t i = 0; i < count; ++i) {
        if (i) out_.put(',');
        value(items[i], 2);
      }
      out_.put("],\"::first\":");
      value(st[1], 1);
      out_.put('}');
      return true;
    }
    case BTreeKind::kNone:
      break;
  }
  return false;
}

bool Emitter::bucket_items(NodeId items_node, bool set) {
  const NodeId* items;
  size_t n;
  tuple_items(items_node, items, n);
  if (set) {
    out_.put("\"::keys\":[");
    for (size_t i = 0; i < n; ++i) {
      if (i) out_.put(',');
      value(items[i], 2);
    }
    out_.put(']');
    return true;
  }
  // Keys that are strings or integers make an object; any other key type a list of pairs.
  bool object = true;
  for (size_t i = 0; i < n && object; i += 2) {
    const Kind k = t_[items[i]].kind;
    object = k == Kind::kStr || k == Kind::kInt || k == Kind::kBigLe || k == Kind::kBigText ||
             (k == Kind::kPy2Str && key_stringable(items[i]));
  }
  out_.put("\"::items\":");
  if (object) {
    out_.put('{');
    bool first = true;
    members(items, n, 1, first);
    out_.put('}');
  } else {
    out_.put('[');
    pair_list(items, n, 1);
    out_.put(']');
  }
  return true;
}

}  // namespace relstore::pickle
