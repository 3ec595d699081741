// relstore bench URI [--json] [--objects-per-txn 1,5,20] [--concurrency 1,4] [--transactions N]
#include <cstdio>
#include <memory>

#include "commands.h"
#include "relstore/bench.h"

namespace relstore::cli {

void add_bench_command(CLI::App& app) {
  auto config = std::make_shared<BenchConfig>();
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "zodbshootout-style benchmark: add, update, cold and hot reads and conflicting updates, "
      "for several objects per transaction and worker processes. Writes new objects into the "
      "database (existing data is left alone).");
  cmd->add_option("URI", config->uri, "the database (must be writable)")->required();
  cmd->add_flag("--json", *json, "print the figures as a JSON array instead of a table");
  cmd->add_option("--objects-per-txn", config->objects_per_txn, "objects per transaction")
      ->delimiter(',')
      ->check(kCount);
  // Upper bounds so that a slip of the keyboard is a usage error, not an allocation that
  // fails (std::bad_alloc) or a fork bomb that runs out of descriptors half-way.
  cmd->add_option("--concurrency", config->concurrency, "worker processes (at most 256)")
      ->delimiter(',')
      ->check(kCount)
      ->check(CLI::Range(1, 256));
  cmd->add_option("--transactions", config->transactions, "transactions per worker and test")
      ->check(kCount);
  cmd->add_option("--object-size", config->object_size,
                  "bytes of data per object, each written as a ZODB record of a bytes value "
                  "(at most 256 MiB)")
      ->check(kCount)
      ->check(CLI::Range(size_t{1}, size_t{256} << 20));
  cmd->callback([config, json] {
    if (*json) {
      std::fputs(format_bench_json(run_bench(*config)).c_str(), stdout);
      return;
    }
    // The header with the first row: a run refused at the start prints no table.
    bool header = false;
    run_bench(*config, [&header](const BenchResult& r) {
      if (!header) std::fputs(bench_table_header().c_str(), stdout);
      header = true;
      std::fputs(bench_table_row(r).c_str(), stdout);
      std::fflush(stdout);
    });
  });
}

}  // namespace relstore::cli
