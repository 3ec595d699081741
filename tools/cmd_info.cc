// relstore info URI [--json]
#include <cstdio>
#include <memory>

#include "commands.h"
#include "relstore/ops.h"

namespace relstore::cli {

void add_info_command(CLI::App& app) {
  struct Args {
    std::string uri;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "info",
      "Show a database's mode, schema version, object and transaction counts, size and "
      "last TID. Opens read-only and creates nothing.");
  cmd->add_option("URI", args->uri, "the database")->required();
  cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->callback([args] {
    const StorageInfo info = inspect_storage(args->uri);
    const std::string text = format_info(info, StorageUri::parse(args->uri).redacted(), args->json);
    std::fputs(text.c_str(), stdout);
  });
}

}  // namespace relstore::cli
