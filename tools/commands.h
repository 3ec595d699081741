// Each subcommand of `relstore` registers itself on the app; its callback parses nothing
// more and calls a library function (include/relstore/ops.h, bench.h, …).
#pragma once

#include <CLI/CLI.hpp>
#include <stdexcept>

namespace relstore::cli {

// A command stopped by the user (SIGINT, SIGTERM) after leaving things consistent; main
// prints the message and exits with 130, as a shell reports an interrupted command.
class Interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// For counts and intervals that must be above zero. CLI11's PositiveNumber names the
// largest double in its message ("not in range 0.000000 to 1797…"); this says what is wrong.
inline const CLI::Validator kPositive(
    [](std::string& value) -> std::string {
      double number = 0;
      size_t used = 0;
      try {
        number = std::stod(value, &used);
      } catch (const std::exception&) {
      }
      if (used == 0 || used != value.size()) return "'" + value + "' is not a number";
      return number > 0 ? std::string() : "must be greater than 0, not " + value;
    },
    "POSITIVE");

void add_info_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_migrate_command(CLI::App& app);
void add_sample_command(CLI::App& app);
void add_convert_command(CLI::App& app);
void add_json_mirror_command(CLI::App& app);

}  // namespace relstore::cli
