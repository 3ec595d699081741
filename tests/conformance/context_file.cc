// FileStorage (Data.fs): history-preserving only; every test gets a new file, opened for
// writing (`reopen()` then shares this process's one writer, as a FileStorage allows).
#include <memory>

#include "conformance/context.h"
#include "support/temp_dir.h"

namespace relstore::conformance {
namespace {

class FileContext : public Context {
 public:
  std::optional<std::string> unavailable() const override { return std::nullopt; }
  std::string fresh_uri() override {
    dirs_.push_back(std::make_unique<testing::TempDir>());
    return "file://" + dirs_.back()->sub("Data.fs") + "?write=1&fsync=0";
  }
  bool client_clock() const override { return true; }
  bool multi_process_writers() const override { return false; }

 private:
  std::vector<std::unique_ptr<testing::TempDir>> dirs_;
};

}  // namespace

std::vector<Backend> backends() { return {{"file", true}}; }

std::unique_ptr<Context> make_context(const Backend&) { return std::make_unique<FileContext>(); }

}  // namespace relstore::conformance
