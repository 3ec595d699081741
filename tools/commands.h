// Each subcommand of `relstore` registers itself on the app; its callback parses nothing
// more and calls a library function (include/relstore/ops.h, bench.h, …).
#pragma once

#include <CLI/CLI.hpp>

namespace relstore::cli {

void add_info_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_migrate_command(CLI::App& app);
void add_sample_command(CLI::App& app);
void add_convert_command(CLI::App& app);
void add_json_mirror_command(CLI::App& app);

}  // namespace relstore::cli
