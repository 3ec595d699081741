// relstore migrate status URI | relstore migrate up URI [--dry-run]
#include <cstdio>
#include <memory>

#include "commands.h"
#include "relstore/ops.h"

namespace relstore::cli {

void add_migrate_command(CLI::App& app) {
  auto uri = std::make_shared<std::string>();
  auto dry_run = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("migrate",
                                     "Show or apply relstore's numbered schema "
                                     "migrations (migrations/<dialect>/)");
  cmd->require_subcommand(1);
  CLI::App* status = cmd->add_subcommand("status",
                                         "current version and pending migrations; "
                                         "changes nothing");
  status->add_option("URI", *uri, "the database")->required();
  status->callback(
      [uri] { std::fputs(format_migration_status(migration_status(*uri)).c_str(), stdout); });
  CLI::App* up = cmd->add_subcommand("up", "apply the pending migrations in order");
  up->add_option("URI", *uri, "the database")->required();
  up->add_flag("--dry-run", *dry_run, "list what would be applied and change nothing");
  up->callback([uri, dry_run] {
    const auto names = migrate_up(*uri, *dry_run);
    if (names.empty()) std::puts("nothing to apply: the schema is current");
    for (const auto& n : names)
      std::printf("%s %s\n", *dry_run ? "would apply" : "applied", n.c_str());
  });
}

}  // namespace relstore::cli
