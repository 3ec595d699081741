// The shared codec corpus (../shared/fixtures/codec-corpus/Data.fs.gz), decompressed for
// tests. CI always has it; elsewhere tests that need it skip with a reason.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace relstore::testing {

// Path of the decompressed corpus Data.fs (a temporary file made once per process and
// removed at exit), or none when the fixture is not beside the project.
std::optional<std::string> codec_corpus_path();

// True when RELSTORE_REQUIRE_FIXTURES=1: a missing fixture then fails the test.
bool fixtures_required();

// What a test prints when the corpus is missing.
std::string missing_corpus_reason();

}  // namespace relstore::testing

// Declares `const std::string var` holding the corpus path, or ends the test: skipped when
// the fixture is absent, failed when RELSTORE_REQUIRE_FIXTURES=1. Use in a TEST body.
#define RELSTORE_CODEC_CORPUS(var)                                                             \
  const std::optional<std::string> var##_optional_ = ::relstore::testing::codec_corpus_path(); \
  if (!var##_optional_) {                                                                      \
    if (::relstore::testing::fixtures_required()) {                                            \
      FAIL() << ::relstore::testing::missing_corpus_reason();                                  \
    }                                                                                          \
    GTEST_SKIP() << ::relstore::testing::missing_corpus_reason();                              \
  }                                                                                            \
  const std::string var = *var##_optional_
