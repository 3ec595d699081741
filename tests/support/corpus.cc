#include "support/corpus.h"

#include <stdlib.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>

namespace relstore::testing {
namespace {

const char* corpus_gz() {
  return RELSTORE_SOURCE_DIR "/../shared/fixtures/codec-corpus/Data.fs.gz";
}

// Owns the temporary directory for the life of the process.
struct TempCorpus {
  std::filesystem::path dir;
  ~TempCorpus() {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
};

std::string decompress() {
  static TempCorpus temp;
  std::string tmpl = (std::filesystem::temp_directory_path() / "relstore-corpus-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed for the codec corpus");
  temp.dir = tmpl;
  const std::string out_path = (temp.dir / "Data.fs").string();

  gzFile in = gzopen(corpus_gz(), "rb");
  if (!in) throw std::runtime_error(std::string("cannot open ") + corpus_gz());
  std::ofstream out(out_path, std::ios::binary);
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(in, buf, sizeof buf)) > 0) out.write(buf, n);
  const bool failed = n < 0;
  gzclose(in);
  out.close();
  if (failed || !out) throw std::runtime_error(std::string("cannot decompress ") + corpus_gz());
  return out_path;
}

}  // namespace

std::optional<std::string> codec_corpus_path() {
  static std::once_flag once;
  static std::optional<std::string> path;
  std::call_once(once, [] {
    std::error_code ec;
    if (std::filesystem::exists(corpus_gz(), ec)) path = decompress();
  });
  return path;
}

bool fixtures_required() {
  const char* v = std::getenv("RELSTORE_REQUIRE_FIXTURES");
  return v && std::string(v) == "1";
}

std::string missing_corpus_reason() {
  return std::string("codec corpus fixture not found at ") + corpus_gz() +
         " (it lives in ../shared beside the project; CI sets RELSTORE_REQUIRE_FIXTURES=1)";
}

}  // namespace relstore::testing
