// relstore pack URI [--days D] [--gc | --no-gc] [--prepack-only] [--check-refs] [--json]
#include <cstdio>
#include <memory>

#include "commands.h"
#include "relstore/ops.h"

namespace relstore::cli {

void add_pack_command(CLI::App& app) {
  struct Args {
    std::string uri;
    double days = 0;
    PackOptions options;
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
  cmd->add_flag("--gc,!--no-gc", args->options.gc,
                "remove the objects nothing reaches from the root (the default); --no-gc keeps "
                "them, only superseded revisions go");
  cmd->add_flag("--prepack-only", args->options.prepack_only,
                "read the graph and report what a pack would remove; remove nothing");
  cmd->add_flag("--check-refs", args->options.check_refs,
                "refuse, removing nothing, when an object the pack keeps references one that "
                "does not exist or that the pack would remove");
  cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->callback([args] {
    const PackResult result = pack_storage(args->uri, args->days, args->options);
    std::fputs(format_pack_result(result, args->json).c_str(), stdout);
  });
}

}  // namespace relstore::cli
