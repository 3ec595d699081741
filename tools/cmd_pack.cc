// relstore pack URI [--days D] [--no-gc] [--json]
#include <cstdio>
#include <memory>

#include "commands.h"
#include "relstore/ops.h"

namespace relstore::cli {

void add_pack_command(CLI::App& app) {
  struct Args {
    std::string uri;
    double days = 0;
    bool no_gc = false;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "pack",
      "Like zodbpack: remove the revisions superseded before the pack time "
      "(history-preserving) and the objects nothing reaches from the root, while "
      "applications go on committing.");
  cmd->add_option("URI", args->uri, "the database")->required();
  cmd->add_option("--days,-d", args->days, "pack to this many days before now (default 0: now)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--no-gc", args->no_gc, "keep unreachable objects (only superseded revisions go)");
  cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->callback([args] {
    const PackResult result = pack_storage(args->uri, args->days, !args->no_gc);
    std::fputs(format_pack_result(result, args->json).c_str(), stdout);
  });
}

}  // namespace relstore::cli
