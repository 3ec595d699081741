// Rewrites of protocol 0 text arguments into the bytes they stand for.
#pragma once

#include <cstdint>
#include <string_view>

#include "pickle/arena.h"

namespace relstore::pickle {

// The bytes of a Python 2 string literal body (the STRING opcode's argument without its
// quotes): backslash escapes \\ \' \" \a \b \f \n \r \t \v \ooo \xhh are resolved, any other
// backslash is kept. Throws Fault on a bad \x escape or a trailing backslash.
std::string_view unescape_py2_string(std::string_view body, ByteArena& arena);

// The UNICODE opcode's raw-unicode-escape text as UTF-8: \uXXXX and \UXXXXXXXX become code
// points (surrogates are encoded as 3-byte sequences and resolved when JSON is written),
// every other byte is a Latin-1 character. Throws Fault on a bad escape.
std::string_view decode_raw_unicode_escape(std::string_view text, ByteArena& arena);

// An INT/LONG opcode argument (decimal text, optional sign, a trailing L for LONG) or a
// PUT/GET memo key. Values that do not fit 64 bits come back as normalized digits
// (no sign, no leading zeros). Throws Fault on bad text or more than kPickleMaxLongDigits.
struct TextInt {
  bool big = false;
  bool negative = false;
  int64_t value = 0;        // when !big
  std::string_view digits;  // when big
};
TextInt parse_text_int(std::string_view text, bool allow_long_suffix);

// A FLOAT opcode argument ("1.5", "1e-05", "inf", "nan"). Throws Fault on bad text.
double parse_text_float(std::string_view text);

// Appends the UTF-8 encoding of code point `cp` (up to U+10FFFF, surrogates included) at `out`
// and returns the end.
char* put_utf8(char* out, uint32_t cp);

}  // namespace relstore::pickle
