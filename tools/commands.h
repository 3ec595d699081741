// Each subcommand of `relstore` registers itself on the app; its callback parses nothing
// more and calls a library function (include/relstore/ops.h, bench.h, …).
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace relstore::cli {

// A command stopped by the user (SIGINT, SIGTERM) after leaving things consistent; main
// prints the message and exits with 130, as a shell reports an interrupted command.
class Interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A whole number as people write it: decimal digits only, within 64 bits. CLI11 reads
// integers with strtoull in base 0, which takes "010" for 8, "0x10" for 16, "-1" for
// 2**64-1 and a number past 2**64 for 2**64-1, all without a word.
inline std::string whole_number_error(const std::string& value) {
  const bool digits = !value.empty() && std::all_of(value.begin(), value.end(),
                                                    [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) return "'" + value + "' is not a whole number";
  if (value.size() > 1 && value[0] == '0') return "'" + value + "': write it without leading zeros";
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size())
    return "'" + value + "' is too large";
  return {};
}
inline const CLI::Validator kWholeNumber(whole_number_error, "NUMBER");
// For counts that must be above zero.
inline const CLI::Validator kCount(
    [](std::string& value) -> std::string {
      const std::string error = whole_number_error(value);
      if (!error.empty()) return error;
      return value == "0" ? "must be greater than 0, not 0" : std::string();
    },
    "COUNT");

// For intervals (and other non-integer values) that must be above zero. CLI11's PositiveNumber
// names the largest double in its message ("not in range 0.000000 to 1797…"); this says what is
// wrong.
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
void add_pack_command(CLI::App& app);
void add_verify_command(CLI::App& app);

}  // namespace relstore::cli
