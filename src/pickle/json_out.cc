#include "pickle/json_out.h"

#include <bit>
#include <charconv>
#include <cmath>

namespace relstore::pickle {
namespace {

constexpr char kHex[] = "0123456789abcdef";

}  // namespace

void JsonOut::grow(size_t n) {
  size_t cap = cap_ ? cap_ * 2 : 4096;
  while (cap - size_ < n) cap *= 2;
  auto bigger = std::make_unique<char[]>(cap);
  if (size_) std::memcpy(bigger.get(), buf_.get(), size_);
  buf_ = std::move(bigger);
  cap_ = cap;
}

void JsonOut::put_int(int64_t v) {
  char* o = reserve(24);
  commit_to(std::to_chars(o, o + 24, v).ptr);
}

void JsonOut::put_uint(uint64_t v) {
  char* o = reserve(24);
  commit_to(std::to_chars(o, o + 24, v).ptr);
}

void JsonOut::put_float(double v) {
  if (!std::isfinite(v)) return put("null");
  put_float_text(v);
}

void JsonOut::put_float_text(double v) {
  if (std::isnan(v)) return put("NaN");
  if (std::isinf(v)) return put(v > 0 ? "Infinity" : "-Infinity");
  // The shortest digits that round-trip, laid out by Python's repr() rules: positional
  // notation when the decimal point falls in -4 < decpt <= 16, scientific otherwise.
  char sci[32];
  const char* sci_end = std::to_chars(sci, sci + sizeof sci, v, std::chars_format::scientific).ptr;
  const char* s = sci;
  char* o = reserve(40);
  if (*s == '-') *o++ = *s++;
  char digits[20];
  int n = 0;
  for (; s < sci_end && *s != 'e'; ++s) {
    if (*s != '.') digits[n++] = *s;
  }
  int exp = 0;
  std::from_chars(s + 1 + (s[1] == '+'), sci_end, exp);
  const int decpt = exp + 1;
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      *o++ = '0', *o++ = '.';
      for (int i = 0; i < -decpt; ++i) *o++ = '0';
      std::memcpy(o, digits, n), o += n;
    } else if (decpt >= n) {
      std::memcpy(o, digits, n), o += n;
      for (int i = n; i < decpt; ++i) *o++ = '0';
      *o++ = '.', *o++ = '0';
    } else {
      std::memcpy(o, digits, decpt), o += decpt;
      *o++ = '.';
      std::memcpy(o, digits + decpt, n - decpt), o += n - decpt;
    }
  } else {
    *o++ = digits[0];
    if (n > 1) {
      *o++ = '.';
      std::memcpy(o, digits + 1, n - 1), o += n - 1;
    }
    *o++ = 'e';
    *o++ = exp < 0 ? '-' : '+';
    const int a = exp < 0 ? -exp : exp;
    if (a < 10) *o++ = '0';
    o = std::to_chars(o, o + 4, a).ptr;
  }
  commit_to(o);
}

void JsonOut::put_hex(std::string_view s) {
  char* o = reserve(s.size() * 2);
  for (unsigned char c : s) {
    *o++ = kHex[c >> 4];
    *o++ = kHex[c & 15];
  }
  commit_to(o);
}

}  // namespace relstore::pickle
