// The emitter's known types (json-mirror.md mapping): datetime, date and time with their
// time zones, Decimal, and the hex form of uuid.UUID.
#include <cstring>

#include "pickle/bigint.h"
#include "pickle/datetime.h"
#include "pickle/emitter.h"

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
  out_.put(k == Known::kDatetime ? "{\"::\":\"datetime\",\"value\":\""
                                 : "{\"::\":\"time\",\"value\":\"");
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

bool Emitter::offset_micro(NodeId timedelta, int64_t& micro) const {
  constexpr int64_t kMillion = 1000000;
  if (t_[timedelta].kind != Kind::kInstance) return false;
  const Instance& td = t_.instances[t_[timedelta].a];
  const NodeId* parts;
  size_t nparts;
  if (known(td.cls) != Known::kTimedelta || !tuple_items(td.args, parts, nparts) || nparts > 3) {
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
  return micro > -86400 * kMillion && micro < 86400 * kMillion;
}

NodeId Emitter::state_value(const Instance& in, std::string_view key) const {
  NodeId found = kNoNode;
  t_.for_each(in.state_head, [&](NodeId st) {
    const Node& d = t_[st];
    if (d.kind != Kind::kDict) return;
    for (uint32_t s = d.a; s != kNoSeg; s = t_.segs[s].next) {
      for (uint32_t i = 0; i + 1 < t_.segs[s].count; i += 2) {
        const Node& k = t_[t_.slots[t_.segs[s].start + i]];
        if ((k.kind == Kind::kStr || k.kind == Kind::kPy2Str) && k.text() == key) {
          found = t_.slots[t_.segs[s].start + i + 1];
        }
      }
    }
  });
  return found;
}

bool Emitter::tz_offset(NodeId tz, int64_t& micro) const {
  const Node& z = t_[tz];
  if (z.kind != Kind::kInstance) return false;
  const Instance& in = t_.instances[z.a];
  const NodeId* args;
  size_t nargs;
  if (!tuple_items(in.args, args, nargs)) return false;
  constexpr int64_t kMillion = 1000000;
  Known k = known(in.cls);
  if (k == Known::kReconstructor && nargs >= 1) k = known(args[0]);  // protocols 0 and 1
  switch (k) {
    case Known::kPytzUtc:
    case Known::kDateutilUtc:
      micro = 0;
      return true;
    case Known::kPytzFixed: {  // FixedOffset(minutes), |minutes| < 1440
      int64_t minutes;
      if (nargs != 1 || !int_value(args[0], minutes) || minutes <= -1440 || minutes >= 1440) {
        return false;
      }
      micro = minutes * 60 * kMillion;
      return true;
    }
    case Known::kDateutilOffset: {
      // Older dateutil pickles tzoffset(name, seconds); newer ones the instance's dict,
      // whose "_offset" is a timedelta.
      int64_t secs;
      if (known(in.cls) == Known::kDateutilOffset && nargs == 2 && int_value(args[1], secs)) {
        if (secs <= -86400 || secs >= 86400) return false;
        micro = secs * kMillion;
        return true;
      }
      const NodeId offset = state_value(in, "_offset");
      return offset != kNoNode && offset_micro(offset, micro);
    }
    case Known::kPytzZone: {
      // pytz._p(zone, utcoffset_seconds, dst_seconds, tzname) for zones with DST; a zone
      // pickled by name alone has no offset without the tz database.
      int64_t secs;
      if (nargs < 2 || !int_value(args[1], secs) || secs <= -86400 || secs >= 86400) return false;
      micro = secs * kMillion;
      return true;
    }
    case Known::kTimezone:  // timezone(timedelta(days, seconds, microseconds)[, name])
      return nargs >= 1 && offset_micro(args[0], micro);
    default:
      return false;
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

void Emitter::uuid_hex(NodeId id) {
  // uuid.UUID keeps its value in the "int" attribute; add the familiar 8-4-4-4-12 form.
  const NodeId value_node = state_value(t_.instances[t_[id].a], "int");
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

}  // namespace relstore::pickle
