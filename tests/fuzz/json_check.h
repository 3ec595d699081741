// A strict JSON checker for the fuzz target (RFC 8259 grammar, strings must be UTF-8 without
// surrogates). nlohmann::json rejects numbers beyond double range, which are valid JSON and
// which the decoder writes on purpose (exact big integers), so it cannot be the judge.
#pragma once

#include <cctype>
#include <cstddef>
#include <string_view>

namespace relstore::fuzz {

class JsonCheck {
 public:
  // True when `s` is exactly one JSON value (surrounding white space allowed).
  static bool valid(std::string_view s) {
    JsonCheck c(s);
    c.space();
    if (!c.value(0)) return false;
    c.space();
    return c.p_ == c.s_.size();
  }

 private:
  explicit JsonCheck(std::string_view s) : s_(s) {}

  bool at_end() const { return p_ >= s_.size(); }
  unsigned char peek() const { return static_cast<unsigned char>(s_[p_]); }
  void space() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++p_;
  }
  bool literal(std::string_view word) {
    if (s_.substr(p_, word.size()) != word) return false;
    p_ += word.size();
    return true;
  }
  bool digits() {
    const size_t from = p_;
    while (!at_end() && peek() >= '0' && peek() <= '9') ++p_;
    return p_ > from;
  }
  bool number() {
    if (peek() == '-') ++p_;
    if (at_end()) return false;
    if (peek() == '0') {
      ++p_;
    } else if (!digits()) {
      return false;
    }
    if (!at_end() && peek() == '.') {
      ++p_;
      if (!digits()) return false;
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
      ++p_;
      if (!at_end() && (peek() == '+' || peek() == '-')) ++p_;
      if (!digits()) return false;
    }
    return true;
  }
  bool cont(size_t i) const {
    return p_ + i < s_.size() && (static_cast<unsigned char>(s_[p_ + i]) & 0xC0) == 0x80;
  }
  bool string() {
    ++p_;  // opening quote
    while (!at_end()) {
      const unsigned char c = peek();
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        ++p_;
        if (at_end()) return false;
        const char e = s_[p_++];
        if (e == 'u') {
          for (int i = 0; i < 4; ++i) {
            if (at_end() || !std::isxdigit(peek())) return false;
            ++p_;
          }
        } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
          return false;
        }
        continue;
      }
      if (c < 0x80) {
        ++p_;
        continue;
      }
      const unsigned char n = p_ + 1 < s_.size() ? static_cast<unsigned char>(s_[p_ + 1]) : 0;
      size_t len = 0;
      if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
      } else if (c >= 0xE0 && c <= 0xEF) {
        if ((c == 0xE0 && n < 0xA0) || (c == 0xED && n >= 0xA0)) return false;
        len = 3;
      } else if (c >= 0xF0 && c <= 0xF4) {
        if ((c == 0xF0 && n < 0x90) || (c == 0xF4 && n > 0x8F)) return false;
        len = 4;
      } else {
        return false;
      }
      for (size_t i = 1; i < len; ++i) {
        if (!cont(i)) return false;
      }
      p_ += len;
    }
    return false;
  }
  bool value(int depth) {
    if (depth > 100000 || at_end()) return false;
    switch (peek()) {
      case '{': {
        ++p_;
        space();
        if (!at_end() && peek() == '}') return ++p_, true;
        for (;;) {
          space();
          if (at_end() || peek() != '"' || !string()) return false;
          space();
          if (at_end() || peek() != ':') return false;
          ++p_;
          space();
          if (!value(depth + 1)) return false;
          space();
          if (at_end()) return false;
          if (peek() == '}') return ++p_, true;
          if (peek() != ',') return false;
          ++p_;
        }
      }
      case '[': {
        ++p_;
        space();
        if (!at_end() && peek() == ']') return ++p_, true;
        for (;;) {
          space();
          if (!value(depth + 1)) return false;
          space();
          if (at_end()) return false;
          if (peek() == ']') return ++p_, true;
          if (peek() != ',') return false;
          ++p_;
        }
      }
      case '"':
        return string();
      case 't':
        return literal("true");
      case 'f':
        return literal("false");
      case 'n':
        return literal("null");
      default:
        return number();
    }
  }

  std::string_view s_;
  size_t p_ = 0;
};

}  // namespace relstore::fuzz
