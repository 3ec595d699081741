#include "support/compare.h"

#include "relstore/convert.h"
#include "relstore/storage.h"

namespace relstore::testing {
namespace {

std::unique_ptr<Storage> open_read_only(const std::string& uri) {
  const StorageUri parsed = StorageUri::parse(uri);
  StorageOptions o = parsed.options();
  o.read_only = true;
  o.create = false;
  return open_storage(parsed, o);
}

}  // namespace

std::vector<std::string> storage_differences(const std::string& a, const std::string& b) {
  auto sa = open_read_only(a);
  auto sb = open_read_only(b);
  return compare_storages(*sa, *sb, 10);
}

}  // namespace relstore::testing
