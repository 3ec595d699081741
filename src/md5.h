// Lowercase hex MD5, for the history-preserving `md5` column.
#pragma once

#include <string>
#include <string_view>

namespace relstore {

std::string md5_hex(std::string_view data);

}  // namespace relstore
