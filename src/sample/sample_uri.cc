#include "relstore/sample.h"
#include "relstore/storage.h"

namespace relstore {

SampleStats write_sample(const std::string& uri, const SampleOptions& options) {
  const StorageUri parsed = StorageUri::parse(uri);
  StorageOptions storage_options = parsed.options();
  // file: URIs open read-only by default; the sample is a writer by nature.
  if (parsed.scheme == Scheme::file && !storage_options.driver.count("write")) {
    storage_options.driver["write"] = "1";
  }
  if (parsed.scheme == Scheme::file && !storage_options.driver.count("fsync")) {
    storage_options.driver["fsync"] = "0";  // one fsync at close: generated data, rerunnable
  }
  auto storage = open_storage(parsed, storage_options);
  SampleStats stats;
  {
    auto instance = storage->new_instance();
    stats = write_sample(*instance, options);
  }
  storage->close();
  return stats;
}

}  // namespace relstore
