// The emitter's persistent references: (oid, class) tuples, bare oids, weak and
// cross-database references (ZODB.serialize's forms), anything else kept as it is.
#include "pickle/emitter.h"
#include "pickle/tree_builder.h"

namespace relstore::pickle {

void Emitter::persistent(NodeId id, unsigned depth) {
  const Node& ref = t_[id];
  const NodeId pid = ref.a;
  const Node& p = t_[pid];
  out_.put("{\"::\":\"persistent\"");
  if (ref.flags & kHasId) {
    out_.put(",\"::id\":");
    out_.put_uint(s_.cycle_ids[id]);
  }
  auto zoid = [&](const Node& b) { out_.put_int(oid_of(b).sql()); };
  const NodeId* items;
  size_t n;
  if (is_oid_bytes(p)) {
    out_.put(",\"id\":");
    zoid(p);
    out_.put(",\"::=>\":");
    zoid(p);
    return out_.put('}');
  }
  if (tuple_items(pid, items, n) && n >= 1 && is_oid_bytes(t_[items[0]])) {
    // (oid, class): the class is a GLOBAL, or None when ZODB did not record it.
    std::string_view module, name;
    out_.put(",\"id\":");
    if (n >= 2 && dotted_name(items[1], module, name)) {
      out_.put('[');
      zoid(t_[items[0]]);
      out_.put(",\"");
      out_.put_escaped(module, opt_.replace_nul);
      out_.put('.');
      out_.put_escaped(name, opt_.replace_nul);
      out_.put("\"]");
    } else {
      zoid(t_[items[0]]);
    }
    out_.put(",\"::=>\":");
    zoid(t_[items[0]]);
    return out_.put('}');
  }
  if (p.kind == Kind::kList) {
    // ['w', (oid[, db])], ['m', (db, oid, class)], ['n', (db, oid)]; also accepted with the
    // arguments spread out in the list itself; and [oid], an old weak reference.
    NodeId e[5];
    size_t count = 0;
    t_.for_each(p.a, [&](NodeId x) {
      if (count < 5) e[count] = x;
      ++count;
    });
    const NodeId* rest = e + 1;
    size_t nrest = count > 5 ? 0 : count - (count ? 1 : 0);
    if (count == 2) {
      if (!tuple_items(e[1], rest, nrest)) rest = e + 1, nrest = 1;
    }
    const Node* tag = count ? &t_[e[0]] : nullptr;
    char kind = 0;
    if (tag && (tag->kind == Kind::kStr || tag->kind == Kind::kPy2Str) && tag->a == 1) {
      kind = tag->u.p[0];
    }
    NodeId oid = kNoNode, db = kNoNode;
    if (count == 1 && is_oid_bytes(t_[e[0]])) {
      // [oid]: the weak reference of old ZODB versions (ZODB's loader still reads it so).
      kind = 'w';
      oid = e[0];
    } else if (kind == 'w' && nrest >= 1 && nrest <= 2) {
      oid = rest[0];
      if (nrest == 2) db = rest[1];
    } else if ((kind == 'm' && (nrest == 2 || nrest == 3)) || (kind == 'n' && nrest == 2)) {
      db = rest[0];
      oid = rest[1];
    }
    if (oid != kNoNode && is_oid_bytes(t_[oid])) {
      out_.put(",\"kind\":\"");
      out_.put(kind);
      out_.put('"');
      if (db != kNoNode) {
        out_.put(",\"db\":");
        value(db, depth + 1);
      }
      out_.put(",\"::=>\":");
      zoid(t_[oid]);
      return out_.put('}');
    }
  }
  // A persistent id ZODB would not write: keep it as it is.
  out_.put(",\"id\":");
  value(pid, depth + 1);
  out_.put('}');
}

}  // namespace relstore::pickle
