// The emitter's objects: instances made by REDUCE/NEWOBJ/INST/OBJ (with the rewrites of known
// types: datetime family, Decimal, UUID, sets, bytes) and persistent references.
#include <cstring>

#include "pickle/bigint.h"
#include "pickle/datetime.h"
#include "pickle/emitter.h"
#include "pickle/fault.h"
#include "pickle/tree_builder.h"

namespace relstore::pickle {
namespace {

// Decimal's str() is nearly always a JSON number already ("6.83", "1E+2", "-0").
bool is_json_number(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  auto digits = [&] {
    const size_t from = i;
    while (i < n && s[i] >= '0' && s[i] <= '9') ++i;
    return i - from;
  };
  if (i < n && s[i] == '-') ++i;
  if (i < n && s[i] == '0') {
    ++i;
  } else if (i < n && s[i] >= '1' && s[i] <= '9') {
    digits();
  } else {
    return false;
  }
  if (i < n && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == n;
}

// Decimal's spellings of NaN and the infinities, which JSON has no number for.
bool is_decimal_special(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  auto lower_eq = [&](std::string_view word) {
    if (s.size() != word.size()) return false;
    for (size_t i = 0; i < s.size(); ++i) {
      if ((s[i] | 0x20) != word[i]) return false;
    }
    return true;
  };
  return lower_eq("nan") || lower_eq("snan") || lower_eq("inf") || lower_eq("infinity");
}

bool is_latin1_name(std::string_view e) {
  return e == "latin1" || e == "latin-1" || e == "latin_1" || e == "iso-8859-1" ||
         e == "iso8859-1";
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

void put_uuid(JsonOut& out, uint64_t hi, uint64_t lo) {
  static constexpr char kHex[] = "0123456789abcdef";
  char buf[36];
  int o = 0;
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) buf[o++] = '-';
    const uint64_t word = i < 16 ? hi : lo;
    buf[o++] = kHex[(word >> (60 - 4 * (i % 16))) & 15];
  }
  out.put(std::string_view(buf, sizeof buf));
}

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
  if (known(in.cls) != Known::kCodecsEncode || !tuple_items(in.args, args, nargs) ||
      nargs != 2 || t_[args[0]].kind != Kind::kStr || t_[args[1]].kind != Kind::kStr ||
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
  // copyreg's helpers name the real class in their arguments.
  if (k == Known::kReconstructor && nargs == 3) {  // (cls, base, base_state)
    cls = args[0];
    const bool none = t_[args[2]].kind == Kind::kNone;
    args = none ? nullptr : args + 2;
    nargs = none ? 0 : 1;
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
  if (plain && k != Known::kOther && special_instance(id, k, args, nargs, depth)) return;
  generic_instance(id, cls, k, args, nargs, kwargs, depth);
}

bool Emitter::special_instance(NodeId, Known k, const NodeId* args, size_t nargs,
                               unsigned depth) {
  switch (k) {
    case Known::kDatetime:
    case Known::kDate:
    case Known::kTime: return datetime_like(k, args, nargs, depth);
    case Known::kDecimal: return decimal(args, nargs);
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
        if (nargs != 2 || t_[args[0]].kind != Kind::kStr || t_[args[1]].kind != Kind::kStr ||
            !is_latin1_name(t_[args[1]].text()) ||
            !utf8_to_latin1(t_[args[0]].text(), s_.latin1)) {
          return false;
        }
        bytes_value(s_.latin1);
        return true;
      }
      if (nargs != 1 || !bytes_of(args[0], b)) return false;
      bytes_value(b);
      return true;
    }
    default: return false;
  }
}

bool Emitter::datetime_like(Known k, const NodeId* args, size_t nargs, unsigned depth) {
  if (nargs < 1 || nargs > (k == Known::kDate ? 1u : 2u)) return false;
  std::string_view b;
  if (!bytes_of(args[0], b)) return false;
  CivilTime t;
  const bool ok = k == Known::kDatetime ? parse_datetime_state(b, t)
                  : k == Known::kDate   ? parse_date_state(b, t)
                                        : parse_time_state(b, t);
  if (!ok) return false;
  char naive[40];
  char* end = k == Known::kDatetime ? put_iso_datetime(naive, t)
              : k == Known::kDate   ? put_iso_date(naive, t)
                                    : put_iso_time(naive, t);
  const std::string_view text(naive, static_cast<size_t>(end - naive));
  const NodeId tz = nargs == 2 && t_[args[1]].kind != Kind::kNone ? args[1] : kNoNode;
  if (tz == kNoNode) {
    out_.put('"');
    out_.put(text);
    out_.put('"');
    return true;
  }
  out_.put(k == Known::kDatetime ? "{\"::\":\"datetime\",\"value\":\"" : "{\"::\":\"time\",\"value\":\"");
  out_.put(text);
  out_.put("\",\"tz\":");
  value(tz, depth + 1);
  int64_t offset;
  if (tz_offset(tz, offset)) {
    char buf[64];
    std::memcpy(buf, naive, text.size());
    char* o = buf + text.size();
    if (put_utc_offset(o, offset)) {
      out_.put(",\"iso\":\"");
      out_.put(std::string_view(buf, static_cast<size_t>(o - buf)));
      out_.put('"');
    }
  }
  out_.put('}');
  return true;
}

bool Emitter::tz_offset(NodeId tz, int64_t& micro) const {
  const Node& z = t_[tz];
  if (z.kind != Kind::kInstance) return false;
  const Instance& in = t_.instances[z.a];
  const NodeId* args;
  size_t nargs;
  if (!tuple_items(in.args, args, nargs)) return false;
  constexpr int64_t kMillion = 1000000;
  switch (known(in.cls)) {
    case Known::kPytzUtc: micro = 0; return true;
    case Known::kPytzZone: {
      // pytz._p(zone, utcoffset_seconds, dst_seconds, tzname) for zones with DST; a zone
      // pickled by name alone has no offset without the tz database.
      int64_t secs;
      if (nargs < 2 || !int_value(args[1], secs) || secs <= -86400 || secs >= 86400) return false;
      micro = secs * kMillion;
      return true;
    }
    case Known::kTimezone: {  // timezone(timedelta(days, seconds, microseconds)[, name])
      if (nargs < 1 || t_[args[0]].kind != Kind::kInstance) return false;
      const Instance& td = t_.instances[t_[args[0]].a];
      const NodeId* parts;
      size_t nparts;
      if (known(td.cls) != Known::kTimedelta || !tuple_items(td.args, parts, nparts) ||
          nparts > 3) {
        return false;
      }
      int64_t v[3] = {0, 0, 0};
      for (size_t i = 0; i < nparts; ++i) {
        if (!int_value(parts[i], v[i])) return false;
      }
      if (v[0] < -1 || v[0] > 1 || v[1] < -86400 || v[1] > 86400 || v[2] <= -kMillion ||
          v[2] >= kMillion) {
        return false;  // not a valid offset (they stay within a day)
      }
      micro = (v[0] * 86400 + v[1]) * kMillion + v[2];
      return true;
    }
    default: return false;
  }
}

bool Emitter::decimal(const NodeId* args, size_t nargs) {
  if (nargs != 1) return false;
  const Node& a = t_[args[0]];
  if (a.kind != Kind::kStr && !(a.kind == Kind::kPy2Str && is_plain_ascii(a.text()))) {
    return false;
  }
  const std::string_view s = a.text();
  if (opt_.decimal_as_string) {
    out_.put_string(s, opt_.replace_nul);
  } else if (is_json_number(s)) {
    out_.put(s);
  } else if (is_decimal_special(s)) {
    out_.put("null");
  } else {
    out_.put_string(s, opt_.replace_nul);
  }
  return true;
}

void Emitter::generic_instance(NodeId id, NodeId cls, Known k, const NodeId* args,
                               size_t nargs, NodeId kwargs, unsigned depth) {
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

void Emitter::uuid_hex(NodeId id) {
  // uuid.UUID keeps its value in the "int" attribute; add the familiar 8-4-4-4-12 form.
  const Instance& in = t_.instances[t_[id].a];
  NodeId value_node = kNoNode;
  t_.for_each(in.state_head, [&](NodeId st) {
    const Node& d = t_[st];
    if (d.kind != Kind::kDict) return;
    for (uint32_t s = d.a; s != kNoSeg; s = t_.segs[s].next) {
      for (uint32_t i = 0; i + 1 < t_.segs[s].count; i += 2) {
        const Node& key_node = t_[t_.slots[t_.segs[s].start + i]];
        if ((key_node.kind == Kind::kStr || key_node.kind == Kind::kPy2Str) &&
            key_node.text() == "int") {
          value_node = t_.slots[t_.segs[s].start + i + 1];
        }
      }
    }
  });
  if (value_node == kNoNode) return;
  const Node& v = t_[value_node];
  uint64_t hi = 0, lo = 0;
  bool ok = false;
  if (v.kind == Kind::kInt) {
    ok = v.u.i >= 0;
    lo = static_cast<uint64_t>(v.u.i);
  } else if (v.kind == Kind::kBigLe) {
    ok = bigint_le_to_u128(v.text(), hi, lo);
  } else if (v.kind == Kind::kBigText) {
    ok = !(v.flags & kNegative) && decimal_to_u128(v.text(), hi, lo);
  }
  if (!ok) return;
  out_.put(",\"hex\":\"");
  put_uuid(out_, hi, lo);
  out_.put('"');
}

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
    // arguments spread out in the list itself.
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
    if (kind == 'w' && nrest >= 1 && nrest <= 2) {
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
