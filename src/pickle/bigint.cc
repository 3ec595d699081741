#include "pickle/bigint.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "pickle/fault.h"
#include "relstore/pickle.h"

namespace relstore::pickle {

void bigint_le_to_decimal(std::string_view le, std::string& out, std::vector<uint32_t>& limbs) {
  out.clear();
  const size_t n = le.size();
  const bool negative = n > 0 && (static_cast<uint8_t>(le[n - 1]) & 0x80);
  // Magnitude as 32-bit limbs, least significant first; negate two's complement on the fly
  // (invert, then add one).
  limbs.assign((n + 3) / 4, 0);
  unsigned carry = negative ? 1 : 0;
  for (size_t i = 0; i < n; ++i) {
    unsigned b = static_cast<uint8_t>(le[i]);
    if (negative) {
      b = (~b & 0xFF) + carry;
      carry = b >> 8;
      b &= 0xFF;
    }
    limbs[i / 4] |= static_cast<uint32_t>(b) << (8 * (i % 4));
  }
  while (!limbs.empty() && limbs.back() == 0) limbs.pop_back();
  if (limbs.empty()) {
    out.assign(1, '0');
    return;
  }
  // Repeated division by 10^9 yields 9 digits per round, least significant group first.
  std::vector<uint32_t> groups;
  groups.reserve(limbs.size() * 32 / 29 + 1);
  while (!limbs.empty()) {
    uint64_t rem = 0;
    for (size_t i = limbs.size(); i-- > 0;) {
      const uint64_t cur = (rem << 32) | limbs[i];
      limbs[i] = static_cast<uint32_t>(cur / 1000000000u);
      rem = cur % 1000000000u;
    }
    groups.push_back(static_cast<uint32_t>(rem));
    while (!limbs.empty() && limbs.back() == 0) limbs.pop_back();
  }
  // Written through to_chars into a sized buffer (one allocation at most).
  char top[16];
  const size_t top_len = static_cast<size_t>(std::to_chars(top, top + 16, groups.back()).ptr - top);
  out.resize((negative ? 1 : 0) + top_len + 9 * (groups.size() - 1));
  char* o = out.data();
  if (negative) *o++ = '-';
  std::memcpy(o, top, top_len);
  o += top_len;
  for (size_t i = groups.size() - 1; i-- > 0;) {
    uint32_t g = groups[i];
    for (int j = 8; j >= 0; --j, g /= 10) o[j] = static_cast<char>('0' + g % 10);
    o += 9;
  }
  const size_t digits = out.size() - (negative ? 1 : 0);
  if (digits > kPickleMaxLongDigits) fault("integer longer than 10000 digits");
}

bool bigint_le_to_u128(std::string_view le, uint64_t& hi, uint64_t& lo) {
  const size_t n = le.size();
  if (n == 0) {
    hi = lo = 0;
    return true;
  }
  if (static_cast<uint8_t>(le[n - 1]) & 0x80) return false;  // negative
  // Python adds a zero byte to keep a set top bit positive, so 17 bytes can still fit.
  for (size_t i = 16; i < n; ++i) {
    if (le[i] != 0) return false;
  }
  hi = lo = 0;
  for (size_t i = std::min<size_t>(n, 16); i-- > 0;) {
    const uint64_t b = static_cast<uint8_t>(le[i]);
    if (i >= 8) {
      hi |= b << (8 * (i - 8));
    } else {
      lo |= b << (8 * i);
    }
  }
  return true;
}

bool decimal_to_u128(std::string_view digits, uint64_t& hi, uint64_t& lo) {
  // hi:lo = hi:lo * 10 + d, checking for overflow of the 128-bit value.
  hi = lo = 0;
  if (digits.empty() || digits.size() > 39) return false;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    // lo * 10 split into 32-bit halves to get the carry into hi.
    const uint64_t lo_lo = (lo & 0xFFFFFFFFu) * 10 + d;
    const uint64_t lo_hi = (lo >> 32) * 10 + (lo_lo >> 32);
    const uint64_t carry = lo_hi >> 32;
    if (hi > (UINT64_MAX - carry) / 10) return false;
    hi = hi * 10 + carry;
    lo = (lo_hi << 32) | (lo_lo & 0xFFFFFFFFu);
  }
  return true;
}

}  // namespace relstore::pickle
