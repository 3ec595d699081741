// Helpers for conversion tests: comparing two databases record by record, and changing a
// source so that a continued conversion has updates and deletions to carry over.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "relstore/types.h"

namespace relstore::testing {

// The first differences (at most 10) between the databases at two URIs, both opened read
// only; empty when they hold the same transactions (HP) or current records (HF).
std::vector<std::string> storage_differences(const std::string& a, const std::string& b);

// Commits one transaction to the database at `uri` that stores oids 10..19 again with
// their own bytes (new revisions) and deletes oids 30..34; returns its TID.
Tid update_and_delete_some(const std::string& uri);

// Runs `relstore convert --batch 500 src dst` in a child process and kills it (SIGKILL, as
// a crash would) once `far_enough` says so — asked every `poll` until `give_up` — or when
// the time is up. `far_enough` may throw StorageError while the destination has no schema.
void convert_killed_when(const std::string& src, const std::string& dst,
                         const std::function<bool()>& far_enough, std::chrono::milliseconds poll,
                         std::chrono::milliseconds give_up);

}  // namespace relstore::testing
