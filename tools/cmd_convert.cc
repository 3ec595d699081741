// relstore convert SRC DST | relstore convert --config zodbconvert.conf, with zodbconvert's
// flags (--dry-run, --clear, --incremental) and --verify, --skip-blobs.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>

#include "commands.h"
#include "config/zodbconvert.h"
#include "relstore/convert.h"
#include "relstore/errors.h"
#include "relstore/progress.h"
#include "relstore/uri.h"

namespace relstore::cli {
namespace {

std::atomic<bool> g_stop{false};

// The first SIGINT or SIGTERM asks the conversion to stop after the transaction or batch
// in hand; a second one ends the process at once (the destination then still holds only
// whole transactions, committed before).
extern "C" void on_stop_signal(int sig) {
  g_stop = true;
  std::signal(sig, SIG_DFL);
}

struct Args {
  std::string source, destination, config;
  ConvertOptions options;
};

void run(Args& a) {
  ConvertOptions& o = a.options;
  if (!a.config.empty()) {
    if (!a.source.empty()) throw ConfigError("give either --config or SOURCE DESTINATION");
    const ZodbconvertConfig c = read_zodbconvert_config(a.config);
    for (const auto& w : c.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
    // Full URIs (passwords included) go to the library; only redacted ones are printed.
    o.source = c.source.uri.text();
    o.destination = c.destination.uri.text();
    o.source_blob_dir = o.source_blob_dir.empty() ? c.source.blob_dir : o.source_blob_dir;
    o.destination_blob_dir =
        o.destination_blob_dir.empty() ? c.destination.blob_dir : o.destination_blob_dir;
  } else {
    if (a.source.empty() || a.destination.empty()) {
      throw ConfigError("convert needs SOURCE and DESTINATION URIs, or --config FILE");
    }
    o.source = a.source;
    o.destination = a.destination;
  }
  ProgressPrinter progress(stderr);
  o.on_progress = [&](const ConvertProgress& p) {
    progress.update({p.transactions, p.records, p.bytes, p.total_transactions, p.seconds});
  };
  o.on_log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  o.stop = &g_stop;
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  const ConvertReport r = convert(o);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  progress.done();
  const ProgressCounts totals{r.done.transactions, r.done.records, r.done.bytes, 0, r.done.seconds};
  const double mb_s =
      r.done.seconds > 0 ? static_cast<double>(r.done.bytes) / 1e6 / r.done.seconds : 0;
  if (r.cleared) std::printf("%s the destination first\n", o.dry_run ? "would clear" : "cleared");
  if (r.started_after) std::printf("continuing after TID %s\n", r.started_after->hex().c_str());
  std::printf("%s %s in %.1f s (%.1f MB/s)%s\n", o.dry_run ? "would copy" : "copied",
              ProgressPrinter::describe(totals).c_str(), r.done.seconds, mb_s,
              r.current_only ? ", current records only (history-free destination)" : "");
  if (r.deletions) {
    std::printf("%s objects the history-free source deleted since: %lu\n",
                o.dry_run ? "would remove" : "removed", static_cast<unsigned long>(r.deletions));
  }
  if (r.first_tid) {
    std::printf("TIDs %s … %s\n", r.first_tid->hex().c_str(), r.last_tid->hex().c_str());
  }
  if (r.blobs_copied)
    std::printf("blob files %s: %lu\n", o.dry_run ? "to copy" : "copied",
                static_cast<unsigned long>(r.blobs_copied));
  if (r.blobs_skipped) {
    std::printf("blob contents left behind (--skip-blobs): %lu\n",
                static_cast<unsigned long>(r.blobs_skipped));
  }
  if (r.interrupted && o.dry_run) {
    throw Interrupted("interrupted after counting " + std::to_string(r.done.transactions) +
                      " transactions (a dry run: nothing was changed)");
  }
  if (r.interrupted && r.done.transactions == 0 && !r.cleared) {
    // Waiting for another conversion into the same database, or right at the start.
    throw Interrupted("interrupted before any transaction was copied into " +
                      StorageUri::parse(o.destination).redacted());
  }
  if (r.interrupted) {
    throw Interrupted("interrupted after " + std::to_string(r.done.transactions) +
                      " transactions: " + StorageUri::parse(o.destination).redacted() +
                      " is an incomplete copy; run the same conversion with --incremental "
                      "(not --clear) to finish it");
  }
  if (r.interrupted_after_copy) {
    const std::string dst = StorageUri::parse(o.destination).redacted();
    if (!r.differences.empty()) {
      for (const auto& d : r.differences) std::printf("verify: %s\n", d.c_str());
      throw StorageError("verify found " + std::to_string(r.differences.size()) +
                         " differences before it was interrupted: " + dst + " is no faithful copy");
    }
    throw Interrupted("interrupted once the copy was complete" +
                      std::string(o.verify ? ", before the verification had finished" : "") + ": " +
                      dst + " holds every transaction; run the same conversion with --incremental" +
                      (o.verify ? " --verify" : "") +
                      " to finish (catching up its JSON mirror, if it has one" +
                      (o.verify ? ", and verifying it)" : ")"));
  }
  if (r.verified && r.source_moved_to) {
    std::printf(
        "verify: the source committed after the copy (its last transaction is now %s, the "
        "copy's %s); compared up to the copy's\n",
        r.source_moved_to->hex().c_str(),
        (r.last_tid ? *r.last_tid : r.started_after.value_or(Tid())).hex().c_str());
  }
  if (r.verified) {
    if (r.differences.empty()) {
      std::printf("verify: source and destination are equal\n");
    } else {
      for (const auto& d : r.differences) std::printf("verify: %s\n", d.c_str());
      throw StorageError("verify found " + std::to_string(r.differences.size()) +
                         (r.differences.size() >= 20 ? " or more" : "") + " differences");
    }
  }
}

}  // namespace

void add_convert_command(CLI::App& app) {
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "convert",
      "Copy a database between SQLite, PostgreSQL, MySQL and Data.fs (file:) URIs, like "
      "zodbconvert: every transaction with its TID and metadata into a history-preserving "
      "destination, the current records (in resumable batches) into a history-free one.");
  cmd->add_option("SOURCE", a->source, "the database to read");
  cmd->add_option("DESTINATION", a->destination, "the database to write");
  cmd->add_option("--config", a->config,
                  "a zodbconvert configuration file (source and "
                  "destination sections)");
  cmd->add_flag("--incremental", a->options.incremental,
                "continue after the destination's last transaction (also resumes an "
                "interrupted conversion)");
  cmd->add_flag("--clear", a->options.clear, "empty the destination first");
  cmd->add_flag("--dry-run", a->options.dry_run, "count what would be copied; change nothing");
  cmd->add_flag("--verify", a->options.verify,
                "afterwards compare source and destination record by record");
  cmd->add_flag("--skip-blobs", a->options.skip_blobs,
                "copy blob records without their contents when the source has none or the "
                "destination cannot hold them, and report how many");
  cmd->add_option(
      "--source-blob-dir", a->options.source_blob_dir,
      "blob directory of the source: a Data.fs's, or a database's shared blob directory");
  cmd->add_option("--destination-blob-dir", a->options.destination_blob_dir,
                  "blob directory of a Data.fs destination (of a database: its blob cache "
                  "to fill as well)");
  cmd->add_option("--batch", a->options.batch_records,
                  "records per database transaction when loading a database destination")
      ->check(kCount);
  cmd->callback([a] { run(*a); });
}

}  // namespace relstore::cli
