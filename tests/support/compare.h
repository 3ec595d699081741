// Record-by-record comparison of two databases for conversion tests.
#pragma once

#include <string>
#include <vector>

namespace relstore::testing {

// The first differences (at most 10) between the databases at two URIs, both opened read
// only; empty when they hold the same transactions (HP) or current records (HF).
std::vector<std::string> storage_differences(const std::string& a, const std::string& b);

}  // namespace relstore::testing
