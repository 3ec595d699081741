// The JSON writer's primitives: Python-style float text, string escaping and UTF-8 repair
// (every length around the 16-byte vector width), integers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "pickle/json_out.h"

namespace relstore::pickle {
namespace {

std::string float_text(double d) {
  JsonOut out;
  out.put_float(d);
  return std::string(out.view());
}

std::string string_json(std::string_view s, bool replace_nul = false) {
  JsonOut out;
  out.put_string(s, replace_nul);
  return std::string(out.view());
}

TEST(PickleJson, FloatsLikePythonRepr) {
  EXPECT_EQ(float_text(0.0), "0.0");
  EXPECT_EQ(float_text(-0.0), "-0.0");
  EXPECT_EQ(float_text(1.0), "1.0");
  EXPECT_EQ(float_text(-2.5), "-2.5");
  EXPECT_EQ(float_text(0.1), "0.1");
  EXPECT_EQ(float_text(1e15), "1000000000000000.0");
  EXPECT_EQ(float_text(1e16), "1e+16");
  EXPECT_EQ(float_text(1.5e300), "1.5e+300");
  EXPECT_EQ(float_text(0.0001), "0.0001");
  EXPECT_EQ(float_text(0.00001), "1e-05");
  EXPECT_EQ(float_text(1.2345e-7), "1.2345e-07");
  EXPECT_EQ(float_text(123456789.125), "123456789.125");
  EXPECT_EQ(float_text(5e-324), "5e-324");
  EXPECT_EQ(float_text(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(float_text(std::nan("")), "null");
  EXPECT_EQ(float_text(-std::numeric_limits<double>::infinity()), "null");
  JsonOut out;
  out.put_float_text(std::numeric_limits<double>::infinity());
  EXPECT_EQ(out.view(), "Infinity");
}

TEST(PickleJson, Integers) {
  JsonOut out;
  out.put_int(std::numeric_limits<int64_t>::min());
  out.put(' ');
  out.put_uint(std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(out.view(), "-9223372036854775808 18446744073709551615");
}

TEST(PickleJson, EscapesAtEveryPosition) {
  // A special byte at each offset of strings around the vector width.
  for (size_t len = 1; len <= 40; ++len) {
    for (size_t at = 0; at < len; ++at) {
      std::string s(len, 'a');
      s[at] = '"';
      std::string want =
          "\"" + std::string(at, 'a') + "\\\"" + std::string(len - at - 1, 'a') + "\"";
      ASSERT_EQ(string_json(s), want) << len << " " << at;
      s[at] = '\x01';
      want = "\"" + std::string(at, 'a') + "\\u0001" + std::string(len - at - 1, 'a') + "\"";
      ASSERT_EQ(string_json(s), want) << len << " " << at;
    }
  }
}

TEST(PickleJson, ControlCharacters) {
  EXPECT_EQ(string_json("\b\f\n\r\t\\\x7f"), R"J("\b\f\n\r\t\\)J"
                                             "\x7f\"");
  EXPECT_EQ(string_json(std::string("\0", 1)), R"J("\u0000")J");
  EXPECT_EQ(string_json(std::string("\0", 1), true), "\"\xef\xbf\xbd\"");
}

TEST(PickleJson, Utf8RunsOfEveryLength) {
  // CJK (3-byte) and Cyrillic (2-byte) runs of many lengths, mixed with ASCII.
  const std::string cjk = "\xe6\x8d\xb7";  // 捷
  const std::string cyr = "\xd0\x96";      // Ж
  for (int n = 0; n < 40; ++n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += cjk;
    s += "x";
    for (int i = 0; i < n; ++i) s += cyr;
    ASSERT_EQ(string_json(s), "\"" + s + "\"") << n;
  }
}

TEST(PickleJson, MalformedUtf8IsRepaired) {
  const std::string fffd = "\xef\xbf\xbd";
  EXPECT_EQ(string_json("\xc0\xaf"), "\"" + fffd + fffd + "\"");             // overlong
  EXPECT_EQ(string_json("\xe0\x80\xaf"), "\"" + fffd + fffd + fffd + "\"");  // overlong
  EXPECT_EQ(string_json("\xf4\x90\x80\x80"),
            "\"" + fffd + fffd + fffd + fffd + "\"");             // > U+10FFFF
  EXPECT_EQ(string_json("\xe6\x8d"), "\"" + fffd + fffd + "\"");  // cut short
  EXPECT_EQ(string_json("ok\x80"), "\"ok" + fffd + "\"");         // stray continuation
  // Surrogates: a lone one is replaced, a pair is joined, a reversed pair is two lone ones.
  EXPECT_EQ(string_json("\xed\xa0\x80"), "\"" + fffd + "\"");
  EXPECT_EQ(string_json("\xed\xa0\xbd\xed\xb8\x80"), "\"\xf0\x9f\x98\x80\"");
  EXPECT_EQ(string_json("\xed\xb8\x80\xed\xa0\xbd"), "\"" + fffd + fffd + "\"");
  // A long string with one bad byte far in: the rest is kept exactly.
  std::string s(100, 'z');
  s[70] = '\xff';
  std::string want(100, 'z');
  want.replace(70, 1, fffd);
  EXPECT_EQ(string_json(s), "\"" + want + "\"");
}

// A byte-at-a-time statement of what put_string must produce, to hold the vector code to.
std::string reference_json(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  const std::string fffd = "\xef\xbf\xbd";
  auto b = [&](size_t i) { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0u; };
  auto cont = [&](size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const unsigned c = b(i);
    if (c < 0x80) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c == '\n') {
        out += "\\n";
      } else if (c == '\r') {
        out += "\\r";
      } else if (c == '\t') {
        out += "\\t";
      } else if (c == '\b') {
        out += "\\b";
      } else if (c == '\f') {
        out += "\\f";
      } else if (c < 0x20) {
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 15];
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    size_t len = 0;
    if (c >= 0xC2 && c <= 0xDF && cont(i + 1)) len = 2;
    if (c >= 0xE0 && c <= 0xEF && cont(i + 1) && cont(i + 2) && !(c == 0xE0 && b(i + 1) < 0xA0) &&
        !(c == 0xED && b(i + 1) >= 0xA0)) {
      len = 3;
    }
    if (c >= 0xF0 && c <= 0xF4 && cont(i + 1) && cont(i + 2) && cont(i + 3) &&
        !(c == 0xF0 && b(i + 1) < 0x90) && !(c == 0xF4 && b(i + 1) > 0x8F)) {
      len = 4;
    }
    if (len) {
      out += s.substr(i, len);
      i += len;
    } else if (c == 0xED && b(i + 1) >= 0xA0 && cont(i + 2)) {
      const unsigned hi = 0xD000 | ((b(i + 1) & 0x3F) << 6) | (b(i + 2) & 0x3F);
      if (hi < 0xDC00 && b(i + 3) == 0xED && b(i + 4) >= 0xB0 && cont(i + 4) && cont(i + 5)) {
        const unsigned lo = 0xD000 | ((b(i + 4) & 0x3F) << 6) | (b(i + 5) & 0x3F);
        const unsigned cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
        i += 6;
      } else {
        out += fffd;
        i += 3;
      }
    } else {
      out += fffd;
      ++i;
    }
  }
  return out + "\"";
}

TEST(PickleJson, VectorEscapingMatchesTheReference) {
  // Random strings from pieces that exercise every branch: ASCII, escapes, 2/3/4-byte
  // characters, the leads with range rules (E0, ED, F0, F4), surrogates, stray bytes.
  const std::vector<std::string> pieces = {
      "a",
      "plain text ",
      "0123456789",
      "\"",
      "\\",
      "\n",
      std::string("\0", 1),
      "\x1f",
      "\xc3\xa9",
      "\xd0\x96",
      "\xe6\x8d\xb7",
      "\xef\xbc\x88",
      "\xe0\xa4\xb9",
      "\xed\x95\x9c",
      "\xf0\x9f\x98\x80",
      "\xf4\x8f\xbf\xbf",
      "\xe0\x80\x80",
      "\xed\xa0\x80",
      "\xed\xb8\x80",
      "\xed\xa0\xbd\xed\xb8\x80",
      "\xf0\x80\x80\x80",
      "\xf4\x90\x80\x80",
      "\xc0\x80",
      "\xc1",
      "\xf5",
      "\xff",
      "\x80",
      "\xbf",
      "\xe6\x8d",
      "\xf0\x9f",
      "\xe6\x8d\xb7\xe5\x85\x8b\xe5\x85\xb1\xe5\x92\x8c\xe5\x9c\x8b\xe6\x8d\xb7",  // 6 CJK
      "\xd0\x96\xd0\x96\xd0\x96\xd0\x96\xd0\x96\xd0\x96\xd0\x96\xd0\x96"};         // 8 Cyrillic
  std::mt19937 rng(6);
  for (int round = 0; round < 50000; ++round) {
    std::string s;
    const int count = static_cast<int>(rng() % 24);
    for (int i = 0; i < count; ++i) s += pieces[rng() % pieces.size()];
    ASSERT_EQ(string_json(s), reference_json(s)) << ::testing::PrintToString(s);
  }
}

TEST(PickleJson, Hex) {
  JsonOut out;
  out.put_hex(std::string("\x00\x7f\xff\x10", 4));
  EXPECT_EQ(out.view(), "007fff10");
}

TEST(PickleJson, PlainAsciiAndUtf8Checks) {
  EXPECT_TRUE(is_plain_ascii("Hello, world\t\n\r"));
  EXPECT_FALSE(is_plain_ascii(std::string("a\0", 2)));
  EXPECT_TRUE(is_plain_ascii("\x7f\x01\x1f"));
  EXPECT_FALSE(is_plain_ascii("caf\xc3\xa9"));
  EXPECT_TRUE(is_valid_utf8("caf\xc3\xa9 \xe6\x8d\xb7 \xf0\x9f\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));
  EXPECT_FALSE(is_valid_utf8("\xe9"));
}

}  // namespace
}  // namespace relstore::pickle
