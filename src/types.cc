#include "relstore/types.h"

#include <stdexcept>

namespace relstore {

template <class Tag>
Id<Tag> Id<Tag>::from_bytes(std::string_view b) {
  if (b.size() != 8) {
    throw std::invalid_argument("an id must be 8 bytes, got " + std::to_string(b.size()));
  }
  return Id(read_be64(reinterpret_cast<const unsigned char*>(b.data())));
}

template <class Tag>
std::string Id<Tag>::bytes() const {
  std::string out(8, '\0');
  write_be64(reinterpret_cast<unsigned char*>(out.data()), value_);
  return out;
}

template <class Tag>
std::string Id<Tag>::hex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out = "0x";
  for (int shift = 60; shift >= 0; shift -= 4) out += kDigits[(value_ >> shift) & 0xf];
  return out;
}

template class Id<OidTag>;
template class Id<TidTag>;

}  // namespace relstore
