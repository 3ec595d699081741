// Hand assembly of pickle opcode streams for the decoder tests: each helper returns the
// bytes of one opcode with its argument, so a test reads like a disassembly.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>

#include "relstore/pickle.h"

namespace relstore::testing::pk {

inline std::string le(uint64_t v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
  return s;
}
inline std::string be64(uint64_t v) {
  std::string s;
  for (int i = 7; i >= 0; --i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
  return s;
}
inline std::string op(uint8_t code) { return std::string(1, static_cast<char>(code)); }

inline std::string proto(int v) { return op(0x80) + op(static_cast<uint8_t>(v)); }
inline std::string stop() { return "."; }
inline std::string mark() { return "("; }
inline std::string none() { return "N"; }
inline std::string yes() { return op(0x88); }
inline std::string no() { return op(0x89); }
inline std::string global(std::string_view module, std::string_view name) {
  return "c" + std::string(module) + "\n" + std::string(name) + "\n";
}
// BININT1 / BININT2 / BININT as the value needs.
inline std::string integer(int64_t v) {
  if (v >= 0 && v < 256) return "K" + le(static_cast<uint64_t>(v), 1);
  if (v >= 0 && v < 65536) return "M" + le(static_cast<uint64_t>(v), 2);
  return "J" + le(static_cast<uint64_t>(v), 4);
}
inline std::string binfloat(double d) {
  uint64_t bits;
  static_assert(sizeof bits == sizeof d);
  std::memcpy(&bits, &d, 8);
  return "G" + be64(bits);
}
// LONG1 with the given little-endian two's complement bytes.
inline std::string long1(std::string_view le_bytes) {
  return op(0x8a) + op(static_cast<uint8_t>(le_bytes.size())) + std::string(le_bytes);
}
inline std::string str(std::string_view s) { return "X" + le(s.size(), 4) + std::string(s); }
inline std::string short_str(std::string_view s) {
  return op(0x8c) + op(static_cast<uint8_t>(s.size())) + std::string(s);
}
inline std::string bytes(std::string_view b) {
  if (b.size() < 256) return "C" + op(static_cast<uint8_t>(b.size())) + std::string(b);
  return "B" + le(b.size(), 4) + std::string(b);
}
// Python 2 str (SHORT_BINSTRING).
inline std::string py2(std::string_view b) {
  return "U" + op(static_cast<uint8_t>(b.size())) + std::string(b);
}
inline std::string put(int k) { return "q" + op(static_cast<uint8_t>(k)); }
inline std::string get(int k) { return "h" + op(static_cast<uint8_t>(k)); }
inline std::string tuple1() { return op(0x85); }
inline std::string tuple2() { return op(0x86); }
inline std::string tuple3() { return op(0x87); }
inline std::string reduce() { return "R"; }
inline std::string build() { return "b"; }
inline std::string newobj() { return op(0x81); }
inline std::string binpersid() { return "Q"; }
inline std::string oid(uint64_t v) { return bytes(be64(v)); }
// A persistent reference (oid, class) as ZODB writes it.
inline std::string ref(uint64_t v, std::string_view module, std::string_view name) {
  return oid(v) + global(module, name) + tuple2() + binpersid();
}
// dict(items…): the items are key, value, key, value… opcode strings.
inline std::string dict_of(std::initializer_list<std::string> items) {
  std::string s = "}" + mark();
  for (const auto& i : items) s += i;
  return s + "u";
}
inline std::string list_of(std::initializer_list<std::string> items) {
  std::string s = "]" + mark();
  for (const auto& i : items) s += i;
  return s + "e";
}
inline std::string tuple_of(std::initializer_list<std::string> items) {
  std::string s = mark();
  for (const auto& i : items) s += i;
  return s + "t";
}

// A protocol 3 class pickle naming module.name.
inline std::string class_pickle(std::string_view module, std::string_view name) {
  return proto(3) + global(module, name) + stop();
}
// A record of a PersistentMapping-like class whose state pickle is `state_ops` + STOP.
inline std::string record(std::string_view state_ops,
                          std::string_view module = "persistent.mapping",
                          std::string_view name = "PersistentMapping") {
  return class_pickle(module, name) + proto(3) + std::string(state_ops) + stop();
}

// The JSON the decoder gives for a state.
inline std::string json_of(std::string_view state_ops, const DecodeOptions& options = {}) {
  return decode_record(record(state_ops), options).json;
}

}  // namespace relstore::testing::pk
