// Helpers for conversion tests: comparing two databases record by record, and changing a
// source so that a continued conversion has updates and deletions to carry over.
#pragma once

#include <string>
#include <vector>

namespace relstore::testing {

// The first differences (at most 10) between the databases at two URIs, both opened read
// only; empty when they hold the same transactions (HP) or current records (HF).
std::vector<std::string> storage_differences(const std::string& a, const std::string& b);

// Commits one transaction to the database at `uri` that stores oids 10..19 again with
// their own bytes (new revisions) and deletes oids 30..34.
void update_and_delete_some(const std::string& uri);

}  // namespace relstore::testing
