// SQLite: every test gets a new data directory.
#include <memory>

#include "conformance/context.h"
#include "support/temp_dir.h"

namespace relstore::conformance {
namespace {

class SqliteContext : public Context {
 public:
  explicit SqliteContext(bool keep_history) : keep_history_(keep_history) {}
  std::optional<std::string> unavailable() const override { return std::nullopt; }
  std::string fresh_uri() override {
    dirs_.push_back(std::make_unique<testing::TempDir>());
    return "sqlite://" + dirs_.back()->sub("db") +
           (keep_history_ ? "?history=preserving" : "?history=free");
  }
  bool client_clock() const override { return true; }

 private:
  bool keep_history_;
  std::vector<std::unique_ptr<testing::TempDir>> dirs_;
};

}  // namespace

std::vector<Backend> backends() { return {{"sqlite", false}, {"sqlite", true}}; }

std::unique_ptr<Context> make_context(const Backend& backend) {
  return std::make_unique<SqliteContext>(backend.keep_history);
}

}  // namespace relstore::conformance
