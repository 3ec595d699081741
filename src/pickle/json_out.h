// The JSON text buffer of the decoder and its primitive writers. Hand-written because it is
// the hot path: one growing buffer that is reused between records, strings escaped 16 bytes
// at a time (json_escape.cc), numbers through std::to_chars. (Handing the buffer to the
// caller by swapping strings instead of copying the text measured slower: two buffers
// alternating cost more cache than the copy.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

namespace relstore::pickle {

class JsonOut {
 public:
  JsonOut() = default;
  JsonOut(const JsonOut&) = delete;
  JsonOut& operator=(const JsonOut&) = delete;

  void clear() { size_ = 0; }
  size_t size() const { return size_; }
  const char* data() const { return buf_.get(); }
  std::string_view view() const { return {buf_.get(), size_}; }
  char* at(size_t offset) { return buf_.get() + offset; }
  // Drops everything after `size` (used to rewrite sorted set members).
  void truncate(size_t size) { size_ = size; }

  // Room for n more bytes; write them at the returned pointer, then call commit(n).
  char* reserve(size_t n) {
    if (cap_ - size_ < n) grow(n);
    return buf_.get() + size_;
  }
  void commit(size_t n) { size_ += n; }
  void commit_to(const char* end) { size_ = static_cast<size_t>(end - buf_.get()); }

  void put(char c) { *reserve(1) = c, ++size_; }
  void put(std::string_view s) {
    std::memcpy(reserve(s.size()), s.data(), s.size());
    size_ += s.size();
  }
  void put_int(int64_t v);
  void put_uint(uint64_t v);
  // A float as Python's repr() writes it ("1.0", "1e-05", "1e+16"); NaN and ±Inf as null.
  void put_float(double v);
  // The same digits as put_float, for use inside a JSON string (dict keys): NaN and
  // infinities spelled as Python's json module does ("NaN", "Infinity", "-Infinity").
  void put_float_text(double v);
  // A JSON string holding `s`, which should be UTF-8: invalid bytes and lone surrogates
  // (encoded as 3-byte sequences, as Python's "surrogatepass" does) become U+FFFD, and
  // surrogate pairs become the character they encode. With replace_nul, U+0000 becomes
  // U+FFFD too (json_escape.cc).
  void put_string(std::string_view s, bool replace_nul) {
    char* o = reserve(s.size() * 6 + 18);
    *o++ = '"';
    o = escape(o, s, replace_nul);
    *o++ = '"';
    commit_to(o);
  }
  // put_string without the quotes, to build one JSON string from several pieces.
  void put_escaped(std::string_view s, bool replace_nul) {
    commit_to(escape(reserve(s.size() * 6 + 16), s, replace_nul));
  }
  // A JSON string holding each byte of `s` as the character of the same number (Latin-1).
  void put_latin1_string(std::string_view s, bool replace_nul);
  // Lowercase hex digits of `s`, no quotes.
  void put_hex(std::string_view s);

 private:
  void grow(size_t n);
  // Writes the escaped text of s at o, which has room for 6 bytes per byte of s plus 16;
  // returns the end.
  static char* escape(char* o, std::string_view s, bool replace_nul);

  std::unique_ptr<char[]> buf_;
  size_t size_ = 0;
  size_t cap_ = 0;
};

// True when every byte is ASCII other than NUL: such bytes become a JSON string (the spec's
// "ASCII → string"; control characters are escaped, so nothing is lost). NUL makes them
// hex: PostgreSQL's jsonb refuses \u0000, and replacing it would change the value.
bool is_plain_ascii(std::string_view s);
// True when `s` is well-formed UTF-8 without surrogates.
bool is_valid_utf8(std::string_view s);

}  // namespace relstore::pickle
