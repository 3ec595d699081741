// Which texts name an oid in a persistent id, shared by the decoder (tree_builder.h) and
// the reference scanner (scanner.cc), so that both list the same references.
#pragma once

#include <string_view>

namespace relstore::pickle {

// An 8-character text of ASCII characters, which ZODB takes for an oid (referencesf and
// persistent loads encode a str oid as ASCII): a Python 3 unpickling of Python 2 data.
inline bool is_ascii_oid_text(std::string_view s) {
  if (s.size() != 8) return false;
  for (unsigned char c : s) {
    if (c >= 0x80) return false;
  }
  return true;
}

}  // namespace relstore::pickle
