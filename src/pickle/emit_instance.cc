// The emitter's objects: instances made by REDUCE/NEWOBJ/NEWOBJ_EX/INST/OBJ, the copyreg
// indirections, and the generic {"::": class, …} form. Known types: emit_known.cc.
#include <cstring>

#include "pickle/emitter.h"
#include "pickle/fault.h"

namespace relstore::pickle {
namespace {

bool is_latin1_name(std::string_view e) {
  return e == "latin1" || e == "latin-1" || e == "latin_1" || e == "iso-8859-1" || e == "iso8859-1";
}

// UTF-8 text to the Latin-1 bytes of its code points; false if one is above U+00FF.
bool utf8_to_latin1(std::string_view s, std::string& out) {
  out.clear();
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if ((c == 0xC2 || c == 0xC3) && i + 1 < s.size() &&
               (static_cast<unsigned char>(s[i + 1]) & 0xC0) == 0x80) {
      out += static_cast<char>(((c & 0x03) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3F));
      ++i;
    } else {
      return false;
    }
  }
  return true;
}

// The encoding argument of bytes(text, encoding) and friends: a str, or in Python 2
// pickles (bytearray(u'…', 'latin-1')) a byte string.
bool is_encoding_name(const Node& n) { return n.kind == Kind::kStr || n.kind == Kind::kPy2Str; }

}  // namespace

Known Emitter::known(NodeId callable) const {
  const Node& c = t_[callable];
  if (c.kind != Kind::kGlobal) return Known::kOther;
  const GlobalRef& g = t_.globals[c.a];
  return classify_global(g.module, g.name);
}

bool Emitter::dotted_name(NodeId id, std::string_view& module, std::string_view& name) const {
  const Node& n = t_[id];
  if (n.kind == Kind::kGlobal) {
    module = t_.globals[n.a].module;
    name = t_.globals[n.a].name;
    return true;
  }
  // Zope 2 era class references: a (module, name) tuple of strings.
  const NodeId* items;
  size_t count;
  if (!tuple_items(id, items, count) || count != 2) return false;
  const Node& m = t_[items[0]];
  const Node& c = t_[items[1]];
  auto is_text = [](const Node& x) { return x.kind == Kind::kStr || x.kind == Kind::kPy2Str; };
  if (!is_text(m) || !is_text(c)) return false;
  module = m.text();
  name = c.text();
  return true;
}

bool Emitter::int_value(NodeId id, int64_t& v) const {
  const Node& n = t_[id];
  if (n.kind != Kind::kInt && n.kind != Kind::kBool) return false;
  v = n.u.i;
  return true;
}

bool Emitter::bytes_of(NodeId id, std::string_view& out) {
  const Node& n = t_[id];
  if (n.kind == Kind::kBytes || n.kind == Kind::kPy2Str || n.kind == Kind::kByteArray) {
    out = n.text();
    return true;
  }
  if (n.kind != Kind::kInstance) return false;
  const Instance& in = t_.instances[n.a];
  const NodeId* args;
  size_t nargs;
  if (known(in.cls) != Known::kCodecsEncode || !tuple_items(in.args, args, nargs) || nargs != 2 ||
      t_[args[0]].kind != Kind::kStr || !is_encoding_name(t_[args[1]]) ||
      !is_latin1_name(t_[args[1]].text())) {
    return false;
  }
  if (!utf8_to_latin1(t_[args[0]].text(), s_.latin1)) return false;
  out = s_.latin1;
  return true;
}

void Emitter::instance(NodeId id, unsigned depth) {
  const Node& node = t_[id];
  const Instance& in = t_.instances[node.a];
  NodeId cls = in.cls;
  NodeId kwargs = in.kwargs;
  const NodeId* args = nullptr;
  size_t nargs = 0;
  NodeId single = in.args;
  if (!tuple_items(in.args, args, nargs) && t_[in.args].kind != Kind::kNone) {
    args = &single;  // REDUCE with a non-tuple argument: keep it as the only one
    nargs = 1;
  }
  Known k = known(cls);
  NodeId base_state = kNoNode;
  // copyreg's helpers name the real class in their arguments.
  if (k == Known::kReconstructor && nargs == 3) {  // (cls, base, base_state)
    cls = args[0];
    std::string_view module, name;
    const Kind state_kind = t_[args[2]].kind;
    const bool builtin_base =
        dotted_name(args[1], module, name) && (module == "builtins" || module == "__builtin__");
    if (builtin_base && ((name == "dict" && state_kind == Kind::kDict) ||
                         (name == "list" && state_kind == Kind::kList))) {
      // A dict or list subclass: its items are the instance's own, as in protocol 2+.
      base_state = args[2];
      args = nullptr;
      nargs = 0;
    } else {
      const bool none = state_kind == Kind::kNone;
      args = none ? nullptr : args + 2;
      nargs = none ? 0 : 1;
    }
    k = known(cls);
  } else if (k == Known::kNewObjFunc && nargs >= 1) {  // (cls, *args)
    cls = args[0];
    ++args;
    --nargs;
    k = known(cls);
  } else if (k == Known::kNewObjExFunc && nargs == 3) {  // (cls, args, kwargs)
    cls = args[0];
    kwargs = args[2];
    const NodeId inner = args[1];
    if (!tuple_items(inner, args, nargs)) nargs = 0;
    k = known(cls);
  }
  const bool plain = in.state_head == kNoSeg && in.items == ItemKind::kNone &&
                     !(node.flags & kHasId) && kwargs == kNoNode;
  if (plain && base_state == kNoNode && k != Known::kOther &&
      special_instance(id, k, args, nargs, depth)) {
    return;
  }
  generic_instance(id, cls, k, args, nargs, kwargs, depth, base_state);
}

bool Emitter::special_instance(NodeId, Known k, const NodeId* args, size_t nargs, unsigned depth) {
  switch (k) {
    case Known::kDatetime:
    case Known::kDate:
    case Known::kTime:
      return datetime_like(k, args, nargs, depth);
    case Known::kDecimal:
      return decimal(args, nargs);
    case Known::kSet:
    case Known::kFrozenSet: {
      if (nargs == 0) {
        out_.put("[]");
        return true;
      }
      if (nargs != 1) return false;
      const Node& a = t_[args[0]];
      if (a.kind == Kind::kList || a.kind == Kind::kSet) {
        sorted_chain(a.a, depth);
        return true;
      }
      if (a.kind == Kind::kTuple || a.kind == Kind::kFrozenSet) {
        sorted_members(t_.items(a), a.b, depth);
        return true;
      }
      return false;
    }
    case Known::kBytes:
    case Known::kByteArray:
    case Known::kCodecsEncode: {
      std::string_view b;
      if (nargs == 0 && k != Known::kCodecsEncode) {
        out_.put("\"\"");
        return true;
      }
      if (k == Known::kCodecsEncode || nargs == 2) {
        // bytes(str, "latin-1") is spelled like _codecs.encode(str, "latin1").
        if (nargs != 2 || t_[args[0]].kind != Kind::kStr || !is_encoding_name(t_[args[1]]) ||
            !is_latin1_name(t_[args[1]].text()) || !utf8_to_latin1(t_[args[0]].text(), s_.latin1)) {
          return false;
        }
        bytes_value(s_.latin1);
        return true;
      }
      if (nargs != 1 || !bytes_of(args[0], b)) return false;
      bytes_value(b);
      return true;
    }
    default:
      return false;
  }
}

void Emitter::generic_instance(NodeId id, NodeId cls, Known k, const NodeId* args, size_t nargs,
                               NodeId kwargs, unsigned depth, NodeId base_state) {
  const Node& node = t_[id];
  const Instance& in = t_.instances[node.a];
  std::string_view module, name;
  if (dotted_name(cls, module, name) && t_[cls].kind == Kind::kGlobal) {
    out_.put("{\"::\":\"");
    out_.put_escaped(module, opt_.replace_nul);
    out_.put('.');
    out_.put_escaped(name, opt_.replace_nul);
    out_.put('"');
  } else {
    // Reduced by something that is not a named callable: say so and keep it.
    out_.put("{\"::\":\"reduce\",\"callable\":");
    value(cls, depth + 1);
  }
  if (node.flags & kHasId) {
    out_.put(",\"::id\":");
    out_.put_uint(s_.cycle_ids[id]);
  }
  if (nargs) {
    out_.put(",\"::()\":[");
    for (size_t i = 0; i < nargs; ++i) {
      if (i) out_.put(',');
      value(args[i], depth + 1);
    }
    out_.put(']');
  }
  if (kwargs != kNoNode && !(t_[kwargs].kind == Kind::kDict && t_[kwargs].a == kNoSeg)) {
    out_.put(",\"::kw\":");
    value(kwargs, depth + 1);
  }
  // BUILD states: a dict (or the (dict, slots) pair of classes with __slots__) becomes
  // attributes next to "::"; anything else is kept under "state".
  bool first = false;
  auto mergeable = [&](NodeId d) {
    const Node& x = t_[d];
    if (x.kind == Kind::kNone) return true;
    if (x.kind != Kind::kDict) return false;
    for (uint32_t s = x.a; s != kNoSeg; s = t_.segs[s].next) {
      if (!keys_stringable(&t_.slots[t_.segs[s].start], t_.segs[s].count)) return false;
    }
    return true;
  };
  auto merge = [&](NodeId d) {
    const Node& x = t_[d];
    if (x.kind != Kind::kDict) return;
    for (uint32_t s = x.a; s != kNoSeg; s = t_.segs[s].next) {
      members(&t_.slots[t_.segs[s].start], t_.segs[s].count, depth, first);
    }
  };
  t_.for_each(in.state_head, [&](NodeId st) {
    const NodeId* pair;
    size_t n;
    if (mergeable(st)) {
      merge(st);
    } else if (tuple_items(st, pair, n) && n == 2 && mergeable(pair[0]) && mergeable(pair[1])) {
      merge(pair[0]);
      merge(pair[1]);
    } else {
      out_.put(",\"state\":");
      value(st, depth + 1);
    }
  });
  if (base_state != kNoNode && t_[base_state].kind == Kind::kList) {
    out_.put(",\"value\":");
    value(base_state, depth + 1);
  } else if (base_state != kNoNode) {
    if (mergeable(base_state)) {
      merge(base_state);
    } else {  // keys that are no JSON keys: a list of pairs, as for SETITEMS below
      out_.put(",\"items\":[");
      bool any = false;
      for (uint32_t s = t_[base_state].a; s != kNoSeg; s = t_.segs[s].next) {
        if (any) out_.put(',');
        any = true;
        pair_list(&t_.slots[t_.segs[s].start], t_.segs[s].count, depth);
      }
      out_.put(']');
    }
  }
  if (in.items == ItemKind::kPairs) {
    bool stringable = true;
    for (uint32_t s = in.item_head; s != kNoSeg && stringable; s = t_.segs[s].next) {
      stringable = keys_stringable(&t_.slots[t_.segs[s].start], t_.segs[s].count);
    }
    if (stringable) {
      for (uint32_t s = in.item_head; s != kNoSeg; s = t_.segs[s].next) {
        members(&t_.slots[t_.segs[s].start], t_.segs[s].count, depth, first);
      }
    } else {
      out_.put(",\"items\":[");
      bool any = false;
      for (uint32_t s = in.item_head; s != kNoSeg; s = t_.segs[s].next) {
        if (any) out_.put(',');
        any = true;
        pair_list(&t_.slots[t_.segs[s].start], t_.segs[s].count, depth);
      }
      out_.put(']');
    }
  } else if (in.items == ItemKind::kValues) {
    out_.put(",\"value\":[");
    bool any = false;
    t_.for_each(in.item_head, [&](NodeId v) {
      if (any) out_.put(',');
      any = true;
      value(v, depth + 1);
    });
    out_.put(']');
  }
  if (k == Known::kUuid) uuid_hex(id);
  out_.put('}');
}

}  // namespace relstore::pickle
