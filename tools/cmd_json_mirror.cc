// relstore json-mirror ACTION: commands of the JSON mirror (json-mirror.md, design.md §7).
// Each action is a subcommand added by its own function below; enable, disable, rebuild,
// follow and status join `bench` the same way.
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "relstore/filestorage.h"
#include "relstore/json_mirror.h"
#include "relstore/pickle.h"
#include "relstore/uri.h"

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
  cmd->add_option("FILE", args->path, "a FileStorage file (Data.fs), as a path or a file: URI")
      ->required();
  cmd->add_flag("--json", args->json,
                "print one JSON object (records, errors, mean_us, p50_us, p95_us, mb_per_s)");
  cmd->add_option("--passes", args->passes,
                  "timed passes after a warm-up; a record's time is the median of its passes")
      ->check(kCount)
      ->check(CLI::Range(1, 1000));
  cmd->callback([args] {
    // Also the file: URI every other command takes.
    std::string path = args->path;
    if (path.starts_with("file:")) path = StorageUri::parse(path).database;
    const auto records = iterate_file_storage(path);
    const DecodeBenchStats stats = bench_decode(*records, args->passes);
    std::fputs(format_bench_stats(stats, args->json).c_str(), stdout);
  });
}

void print_progress(const MirrorProgress& p) {
  std::printf("decoded %llu, removed %llu, undecodable %llu; mirrored to %s (database at %s)\n",
              static_cast<unsigned long long>(p.decoded),
              static_cast<unsigned long long>(p.removed),
              static_cast<unsigned long long>(p.undecodable), p.mirrored_tid.hex().c_str(),
              p.database_tid.hex().c_str());
}

// relstore json-mirror status URI [--json]
void add_status_action(CLI::App& mirror) {
  auto uri = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = mirror.add_subcommand(
      "status", "Mode, rows, last TID mirrored, lag and the count of undecodable states");
  cmd->add_option("URI", *uri, "the database")->required();
  cmd->add_flag("--json", *json, "print one JSON object");
  cmd->callback([uri, json] {
    std::fputs(format_mirror_status(mirror_status(*uri), *json).c_str(), stdout);
  });
}

// relstore json-mirror enable URI [--mode in-commit|follow]
void add_enable_action(CLI::App& mirror) {
  auto uri = std::make_shared<std::string>();
  auto mode = std::make_shared<std::string>("in-commit");
  CLI::App* cmd = mirror.add_subcommand(
      "enable",
      "Turn the mirror on. in-commit (default): every commit writes its rows in the same "
      "transaction; the mirror is caught up before the command returns. follow: a "
      "`relstore json-mirror follow` process keeps it up to date.");
  cmd->add_option("URI", *uri, "the database")->required();
  cmd->add_option("--mode", *mode, "in-commit or follow")
      ->check(CLI::IsMember({"in-commit", "follow"}));
  cmd->callback([uri, mode] {
    const MirrorProgress p = mirror_enable(*uri, parse_mirror_mode(*mode));
    std::printf("JSON mirror enabled (%s)\n", mode->c_str());
    if (*mode == "in-commit") print_progress(p);
  });
}

// relstore json-mirror disable URI
void add_disable_action(CLI::App& mirror) {
  auto uri = std::make_shared<std::string>();
  CLI::App* cmd = mirror.add_subcommand(
      "disable", "Stop maintaining the mirror (its rows stay, and fall behind)");
  cmd->add_option("URI", *uri, "the database")->required();
  cmd->callback([uri] {
    mirror_disable(*uri);
    std::puts("JSON mirror disabled");
  });
}

// relstore json-mirror rebuild URI
void add_rebuild_action(CLI::App& mirror) {
  auto uri = std::make_shared<std::string>();
  CLI::App* cmd = mirror.add_subcommand(
      "rebuild", "Empty the mirror and build it again from every object's current state");
  cmd->add_option("URI", *uri, "the database")->required();
  cmd->callback([uri] { print_progress(mirror_rebuild(*uri)); });
}

// relstore json-mirror follow URI [--once] [--interval S] [--batch N]
void add_follow_action(CLI::App& mirror) {
  auto uri = std::make_shared<std::string>();
  auto options = std::make_shared<FollowOptions>();
  CLI::App* cmd = mirror.add_subcommand(
      "follow",
      "Keep the mirror up to date behind commits: catch up from the recorded progress, then "
      "wait for more (LISTEN/NOTIFY on PostgreSQL, polling elsewhere). Progress is recorded "
      "in the database, so a restarted follower continues where it stopped.");
  cmd->add_option("URI", *uri, "the database")->required();
  cmd->add_flag("--once", options->once, "catch up, then exit");
  cmd->add_option("--interval", options->poll_seconds, "seconds between polls")->check(kPositive);
  cmd->add_option("--batch", options->batch, "states per write transaction")->check(kCount);
  cmd->callback([uri, options] {
    auto last_print = std::make_shared<double>(0);
    options->progress = [last_print](const MirrorProgress& p) {
      // One line per catch-up that did something, with the lag.
      if (p.decoded + p.removed + p.undecodable == 0) return;
      // After a batch that did something the follower has mirrored a TID, so there is a lag.
      const double lag = mirror_lag_seconds(p.database_tid, p.mirrored_tid).value_or(0.0);
      std::printf("mirrored to %s: +%llu rows, -%llu, %llu undecodable, lag %.3f s\n",
                  p.mirrored_tid.hex().c_str(), static_cast<unsigned long long>(p.decoded),
                  static_cast<unsigned long long>(p.removed),
                  static_cast<unsigned long long>(p.undecodable), lag);
      std::fflush(stdout);
    };
    options->on_retry = [](const std::string& what) {
      std::fprintf(stderr, "relstore json-mirror follow: %s\n", what.c_str());
    };
    print_progress(mirror_follow(*uri, *options));
  });
}

}  // namespace

void add_json_mirror_command(CLI::App& app) {
  CLI::App* mirror = app.add_subcommand(
      "json-mirror", "The JSON mirror of object states (a queryable object_json table)");
  mirror->require_subcommand(1);
  add_bench_action(*mirror);
  add_status_action(*mirror);
  add_enable_action(*mirror);
  add_disable_action(*mirror);
  add_rebuild_action(*mirror);
  add_follow_action(*mirror);
}

}  // namespace relstore::cli
