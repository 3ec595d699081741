// How much memory a blob costs on its way into and out of a database (docs/benchmarks.md):
// stores one blob of N MiB through store_blob, then loads it through a second storage
// whose blob cache is empty, so that it comes from blob_chunk. Prints the time and the
// growth of the process's peak resident set in each phase; exits 0. Not a test.
//
//   blob_memory [--mb N] [URI]
//
// URI: a database (a new object is written; nothing else is touched); default a new
// SQLite database in the temporary directory. The blob file is written in pieces, so
// the process holds no copy of it.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "relstore/storage.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double peak_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux reports KiB
}

std::string with_option(const std::string& uri, const std::string& option) {
  return uri + (uri.find('?') == std::string::npos ? "?" : "&") + option;
}

// A file of `mib` MiB of varied bytes, written 1 MiB at a time.
void write_file(const fs::path& path, int mib) {
  std::ofstream out(path, std::ios::binary);
  std::string piece(1 << 20, '\0');
  for (int m = 0; m < mib; ++m) {
    for (size_t i = 0; i < piece.size(); ++i) piece[i] = static_cast<char>((i * 131 + m) >> 2);
    out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
  }
}

}  // namespace

int main(int argc, char** argv) {
  int mib = 256;
  std::string uri;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--mb" && i + 1 < argc) {
      mib = std::atoi(argv[++i]);
    } else if (!arg.starts_with("--") && uri.empty()) {
      uri = arg;
    } else {
      std::fprintf(stderr, "usage: blob_memory [--mb N] [URI]\n");
      return 2;
    }
  }
  const fs::path work = fs::temp_directory_path() / "relstore-blob-memory";
  fs::remove_all(work);
  fs::create_directories(work);
  if (uri.empty()) uri = "sqlite://" + (work / "db").string();
  write_file(work / "upload", mib);

  const double start = peak_mib();
  auto writer = relstore::open_storage(with_option(uri, "blob_dir=" + (work / "a").string()));
  auto inst = writer->new_instance();
  const relstore::Oid oid = inst->new_oid();
  relstore::TransactionMetaData txn{"bench", "blob", ""};
  const double opened = peak_mib();
  auto t0 = Clock::now();
  inst->tpc_begin(txn);
  inst->store_blob(oid, std::nullopt, "blob record", (work / "upload").string(), txn);
  inst->tpc_vote(txn);
  const relstore::Tid tid = inst->tpc_finish(txn);
  const double store_s = std::chrono::duration<double>(Clock::now() - t0).count();
  const double stored = peak_mib();

  auto reader = relstore::open_storage(with_option(uri, "blob_dir=" + (work / "b").string()));
  auto rinst = reader->new_instance();
  t0 = Clock::now();
  const std::string path = rinst->load_blob(oid, tid);
  const double load_s = std::chrono::duration<double>(Clock::now() - t0).count();
  const double loaded = peak_mib();
  if (fs::file_size(path) != static_cast<uintmax_t>(mib) << 20) {
    std::fprintf(stderr, "blob_memory: the loaded blob has the wrong size\n");
    return 1;
  }
  std::printf(
      "| blob | store (s) | load (s) | peak RSS at start (MiB) | growth storing | growth loading "
      "|\n");
  std::printf("|---:|---:|---:|---:|---:|---:|\n");
  std::printf("| %d MiB | %.2f | %.2f | %.0f | %+.0f MiB | %+.0f MiB |\n", mib, store_s, load_s,
              start, stored - opened, loaded - stored);
  rinst.reset();
  reader->close();
  inst.reset();
  writer->close();
  fs::remove_all(work);
  return 0;
}
