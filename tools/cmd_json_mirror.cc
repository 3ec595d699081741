// relstore json-mirror ACTION: commands of the JSON mirror (json-mirror.md, design.md §7).
// Each action is a subcommand added by its own function below; enable, disable, rebuild,
// follow and status join `bench` the same way.
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "relstore/filestorage.h"
#include "relstore/pickle.h"

namespace relstore::cli {
namespace {

// relstore json-mirror bench FILE.fs [--json] [--passes N]
void add_bench_action(CLI::App& mirror) {
  struct Args {
    std::string path;
    bool json = false;
    int passes = 5;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = mirror.add_subcommand(
      "bench",
      "Decode every record of a Data.fs to JSON (with references) on one thread and print "
      "microseconds per record (mean, p50, p95), MB/s and the count of undecodable records.");
  cmd->add_option("FILE", args->path, "a FileStorage file (Data.fs)")->required();
  cmd->add_flag("--json", args->json,
                "print one JSON object (records, errors, mean_us, p50_us, p95_us, mb_per_s)");
  cmd->add_option("--passes", args->passes,
                  "timed passes after a warm-up; a record's time is the median of its passes")
      ->check(CLI::Range(1, 1000));
  cmd->callback([args] {
    const auto records = iterate_file_storage(args->path);
    const DecodeBenchStats stats = bench_decode(*records, args->passes);
    std::fputs(format_bench_stats(stats, args->json).c_str(), stdout);
  });
}

}  // namespace

void add_json_mirror_command(CLI::App& app) {
  CLI::App* mirror = app.add_subcommand(
      "json-mirror", "The JSON mirror of object states (a queryable object_json table)");
  mirror->require_subcommand(1);
  add_bench_action(*mirror);
}

}  // namespace relstore::cli
