// Object and transaction ids, and the byte strings ZODB stores.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace relstore {

// Binary-safe byte string: a ZODB record (class pickle + state pickle), user names,
// descriptions and pickled extension dicts are all raw bytes.
using Bytes = std::string;

// A 64-bit id. ZODB passes ids as 8 big-endian bytes; SQL stores them as signed BIGINT.
template <class Tag>
class Id {
 public:
  constexpr Id() = default;
  constexpr explicit Id(uint64_t value) : value_(value) {}

  // Throws std::invalid_argument unless `b` holds exactly 8 bytes.
  static Id from_bytes(std::string_view b);
  static constexpr Id from_sql(int64_t v) { return Id(static_cast<uint64_t>(v)); }

  constexpr uint64_t value() const { return value_; }
  constexpr int64_t sql() const { return static_cast<int64_t>(value_); }
  constexpr bool is_zero() const { return value_ == 0; }

  // The 8-byte big-endian wire form.
  std::string bytes() const;
  // "0x" followed by 16 lowercase hex digits.
  std::string hex() const;

  constexpr auto operator<=>(const Id&) const = default;

 private:
  uint64_t value_ = 0;
};

struct OidTag {};
struct TidTag {};
using Oid = Id<OidTag>;
using Tid = Id<TidTag>;

extern template class Id<OidTag>;
extern template class Id<TidTag>;

// Big-endian helpers shared by the Data.fs code and the id types.
inline uint64_t read_be64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}
inline void write_be64(unsigned char* p, uint64_t v) {
  for (int i = 7; i >= 0; --i) {
    p[i] = static_cast<unsigned char>(v & 0xff);
    v >>= 8;
  }
}

}  // namespace relstore

template <class Tag>
struct std::hash<relstore::Id<Tag>> {
  size_t operator()(relstore::Id<Tag> id) const noexcept {
    // Multiplicative mix: OIDs are dense small integers.
    return static_cast<size_t>(id.value() * 0x9E3779B97F4A7C15ULL);
  }
};
