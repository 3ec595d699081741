#include "pickle/text.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "pickle/fault.h"
#include "relstore/pickle.h"

namespace relstore::pickle {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads `n` hex digits at `p`; -1 if any is not a hex digit.
int64_t read_hex(const char* p, int n) {
  int64_t v = 0;
  for (int i = 0; i < n; ++i) {
    const int d = hex_value(p[i]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

TextInt parse_text_int(std::string_view text, bool allow_long_suffix) {
  std::string_view s = trim(text);
  if (allow_long_suffix && !s.empty() && s.back() == 'L') s.remove_suffix(1);
  TextInt r;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    r.negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) fault("empty integer text");
  for (char c : s) {
    if (c < '0' || c > '9') fault("bad integer text");
  }
  while (s.size() > 1 && s.front() == '0') s.remove_prefix(1);
  if (s.size() > kPickleMaxLongDigits) fault("integer longer than 10000 digits");
  if (s.size() <= 18) {  // fits: 10^18 < 2^63
    int64_t v = 0;
    for (char c : s) v = v * 10 + (c - '0');
    r.value = r.negative ? -v : v;
    return r;
  }
  // 19 digits may still fit; anything that does not is kept as text.
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  const uint64_t limit = r.negative ? (uint64_t{1} << 63) : (uint64_t{1} << 63) - 1;
  if (ec == std::errc() && ptr == s.data() + s.size() && v <= limit) {
    r.value = r.negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
    return r;
  }
  r.big = true;
  r.digits = s;
  return r;
}

double parse_text_float(std::string_view text) {
  std::string_view s = trim(text);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  // Out-of-range text still parses in Python (to inf or 0); from_chars reports it instead.
  if (ec == std::errc::result_out_of_range) {
    const bool neg = !s.empty() && s.front() == '-';
    const size_t e = s.find_first_of("eE");
    const bool tiny = e != std::string_view::npos && e + 1 < s.size() && s[e + 1] == '-';
    return tiny ? (neg ? -0.0 : 0.0) : (neg ? -HUGE_VAL : HUGE_VAL);
  }
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) fault("bad float text");
  return v;
}

char* put_utf8(char* out, uint32_t cp) {
  if (cp < 0x80) {
    *out++ = static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out++ = static_cast<char>(0xC0 | (cp >> 6));
    *out++ = static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out++ = static_cast<char>(0xE0 | (cp >> 12));
    *out++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out++ = static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *out++ = static_cast<char>(0xF0 | (cp >> 18));
    *out++ = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *out++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out++ = static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

std::string_view unescape_py2_string(std::string_view body, ByteArena& arena) {
  // Fast path: most protocol 0 strings have no escapes at all and can stay in the record.
  if (std::memchr(body.data(), '\\', body.size()) == nullptr) return body;
  char* const start = arena.allocate(body.size());  // unescaping never grows the text
  char* out = start;
  const char* p = body.data();
  const char* const end = p + body.size();
  while (p < end) {
    const char c = *p++;
    if (c != '\\') {
      *out++ = c;
      continue;
    }
    if (p == end) fault("trailing backslash in a STRING argument");
    const char e = *p++;
    switch (e) {
      case '\\':
        *out++ = '\\';
        break;
      case '\'':
        *out++ = '\'';
        break;
      case '"':
        *out++ = '"';
        break;
      case 'a':
        *out++ = '\a';
        break;
      case 'b':
        *out++ = '\b';
        break;
      case 'f':
        *out++ = '\f';
        break;
      case 'n':
        *out++ = '\n';
        break;
      case 'r':
        *out++ = '\r';
        break;
      case 't':
        *out++ = '\t';
        break;
      case 'v':
        *out++ = '\v';
        break;
      case 'x': {
        if (end - p < 2) fault("truncated \\x escape in a STRING argument");
        const int64_t v = read_hex(p, 2);
        if (v < 0) fault("invalid \\x escape in a STRING argument");
        *out++ = static_cast<char>(v);
        p += 2;
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          // Up to three octal digits; Python keeps the low 8 bits of larger values.
          unsigned v = static_cast<unsigned>(e - '0');
          for (int i = 0; i < 2 && p < end && *p >= '0' && *p <= '7'; ++i) {
            v = v * 8 + static_cast<unsigned>(*p++ - '0');
          }
          *out++ = static_cast<char>(v & 0xFF);
        } else {
          // Unknown escapes stand for themselves, backslash included.
          *out++ = '\\';
          *out++ = e;
        }
    }
  }
  return {start, static_cast<size_t>(out - start)};
}

std::string_view decode_raw_unicode_escape(std::string_view text, ByteArena& arena) {
  bool plain = true;
  for (unsigned char c : text) {
    if (c == '\\' || c >= 0x80) {
      plain = false;
      break;
    }
  }
  if (plain) return text;
  // Every input byte yields at most two output bytes (Latin-1 → UTF-8); escapes shrink.
  char* const start = arena.allocate(text.size() * 2);
  char* out = start;
  const char* p = text.data();
  const char* const end = p + text.size();
  while (p < end) {
    const unsigned char c = static_cast<unsigned char>(*p);
    if (c != '\\') {
      out = put_utf8(out, c);
      ++p;
      continue;
    }
    // A run of backslashes: only an odd-length run ending before u/U starts an escape.
    const char* run = p;
    while (p < end && *p == '\\') ++p;
    size_t count = static_cast<size_t>(p - run);
    const bool escape = (count % 2 == 1) && p < end && (*p == 'u' || *p == 'U');
    if (escape) --count;
    std::memset(out, '\\', count);
    out += count;
    if (!escape) continue;
    const int digits = *p == 'u' ? 4 : 8;
    ++p;
    if (end - p < digits) fault("truncated \\u escape in a UNICODE argument");
    const int64_t cp = read_hex(p, digits);
    if (cp < 0) fault("invalid \\u escape in a UNICODE argument");
    if (cp > 0x10FFFF) fault("\\U escape beyond U+10FFFF in a UNICODE argument");
    out = put_utf8(out, static_cast<uint32_t>(cp));
    p += digits;
  }
  return {start, static_cast<size_t>(out - start)};
}

}  // namespace relstore::pickle
