// relstore sample URI --objects N [--seed S] [--start-tid 0x…]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>

#include "commands.h"
#include "relstore/errors.h"
#include "relstore/ops.h"
#include "relstore/sample.h"
#include "relstore/timestamp.h"

namespace relstore::cli {

namespace {

// --start-tid: 0x + 1 to 16 hex digits, above zero and no later than the year 5000, so
// that every later transaction of the sample still fits a signed 64-bit SQL column. Checked
// before anything is written (a wrapped TID failed part-way through, leaving a Data.fs no
// commit could follow).
Tid parse_start_tid(const std::string& text) {
  const Tid latest = TimeStamp(5000, 1, 1, 0, 0, 0).tid();
  const std::string problem = "--start-tid: expected a TID as 0x + hex digits between 0x01 and " +
                              latest.hex() + " (the year 5000), got '" + text + "'";
  std::string_view digits = text;
  if (digits.starts_with("0x") || digits.starts_with("0X")) digits.remove_prefix(2);
  if (digits.empty() || digits.size() > 16 ||
      digits.find_first_not_of("0123456789abcdefABCDEF") != std::string_view::npos) {
    throw ConfigError(problem);
  }
  const Tid tid(std::stoull(std::string(digits), nullptr, 16));
  if (tid.is_zero() || tid > latest) throw ConfigError(problem);
  return tid;
}

}  // namespace

void add_sample_command(CLI::App& app) {
  struct Args {
    std::string uri;
    uint64_t objects = 1000;
    uint64_t seed = 1;
    std::string start_tid;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "sample",
      "Write a generated ZODB content tree (folders and documents as protocol-3 records, in "
      "transactions of 1-50 records) into an empty storage. The same seed gives the same data.");
  cmd->add_option("URI", args->uri, "the destination (file:///path/Data.fs or a database)")
      ->required();
  cmd->add_option("--objects", args->objects, "objects in the tree (root, folders, documents)")
      ->check(kCount);
  cmd->add_option("--seed", args->seed, "random seed")->check(kWholeNumber);
  cmd->add_option("--start-tid", args->start_tid, "TID of the first transaction, as 0x + hex");
  cmd->callback([args] {
    SampleOptions o;
    o.objects = args->objects;
    o.seed = args->seed;
    if (!args->start_tid.empty()) o.start_tid = parse_start_tid(args->start_tid);
    const bool tty = isatty(STDERR_FILENO);
    auto last = std::chrono::steady_clock::now();
    o.progress = [&](const SampleStats& s) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last < std::chrono::seconds(tty ? 1 : 10)) return;
      last = now;
      std::fprintf(
          stderr,
          tty ? "\r%llu / %llu objects, %llu records" : "%llu / %llu objects, %llu records\n",
          static_cast<unsigned long long>(s.objects),
          static_cast<unsigned long long>(args->objects),
          static_cast<unsigned long long>(s.records));
    };
    const auto start = std::chrono::steady_clock::now();
    const SampleStats s = write_sample(args->uri, o);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (tty) std::fputs("\r\033[K", stderr);
    std::printf(
        "wrote %llu objects: %llu records in %llu transactions, %s, in %.1f s\n",
        static_cast<unsigned long long>(s.objects), static_cast<unsigned long long>(s.records),
        static_cast<unsigned long long>(s.transactions), human_bytes(s.bytes).c_str(), secs);
  });
}

}  // namespace relstore::cli
