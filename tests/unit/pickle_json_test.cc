// The JSON writer's primitives: Python-style float text, string escaping and UTF-8 repair
// (every length around the 16-byte vector width), integers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

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
      std::string want = "\"" + std::string(at, 'a') + "\\\"" + std::string(len - at - 1, 'a') + "\"";
      ASSERT_EQ(string_json(s), want) << len << " " << at;
      s[at] = '\x01';
      want = "\"" + std::string(at, 'a') + "\\u0001" + std::string(len - at - 1, 'a') + "\"";
      ASSERT_EQ(string_json(s), want) << len << " " << at;
    }
  }
}

TEST(PickleJson, ControlCharacters) {
  EXPECT_EQ(string_json("\b\f\n\r\t\\\x7f"), R"J("\b\f\n\r\t\\)J" "\x7f\"");
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
  EXPECT_EQ(string_json("\xc0\xaf"), "\"" + fffd + fffd + "\"");            // overlong
  EXPECT_EQ(string_json("\xe0\x80\xaf"), "\"" + fffd + fffd + fffd + "\"");  // overlong
  EXPECT_EQ(string_json("\xf4\x90\x80\x80"), "\"" + fffd + fffd + fffd + fffd + "\"");  // > U+10FFFF
  EXPECT_EQ(string_json("\xe6\x8d"), "\"" + fffd + fffd + "\"");             // cut short
  EXPECT_EQ(string_json("ok\x80"), "\"ok" + fffd + "\"");                  // stray continuation
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

TEST(PickleJson, Hex) {
  JsonOut out;
  out.put_hex(std::string("\x00\x7f\xff\x10", 4));
  EXPECT_EQ(out.view(), "007fff10");
}

TEST(PickleJson, PlainAsciiAndUtf8Checks) {
  EXPECT_TRUE(is_plain_ascii("Hello, world\t\n\r"));
  EXPECT_FALSE(is_plain_ascii(std::string("\0", 1)));
  EXPECT_FALSE(is_plain_ascii("\x7f"));
  EXPECT_FALSE(is_plain_ascii("caf\xc3\xa9"));
  EXPECT_TRUE(is_valid_utf8("caf\xc3\xa9 \xe6\x8d\xb7 \xf0\x9f\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));
  EXPECT_FALSE(is_valid_utf8("\xe9"));
}

}  // namespace
}  // namespace relstore::pickle
