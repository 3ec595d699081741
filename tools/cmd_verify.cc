// relstore verify URI [--json]
#include <cstdio>
#include <memory>

#include "commands.h"
#include "relstore/errors.h"
#include "relstore/ops.h"

namespace relstore::cli {

void add_verify_command(CLI::App& app) {
  struct Args {
    std::string uri;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "verify",
      "Read every current object and check the references between them: none to an "
      "object that does not exist, a root object; count the unreachable ones. In a "
      "database also check that current_object names every object's newest revision "
      "and that an in-commit JSON mirror equals the data (a follower's lag is shown). "
      "Opens read-only; exits 1 when a check fails.");
  cmd->add_option("URI", args->uri, "the database or Data.fs")->required();
  cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->callback([args] {
    const VerifyReport report = verify_storage(args->uri);
    std::fputs(format_verify_report(report, args->json).c_str(), stdout);
    std::fflush(stdout);  // before main's message about the failure, on stderr
    if (!report.ok())
      throw StorageError("verify: " + StorageUri::parse(args->uri).redacted() +
                         " failed its checks (above)");
  });
}

}  // namespace relstore::cli
