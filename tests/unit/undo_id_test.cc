// Undo ids as ZODB writes them: base64.encodebytes(tid)[:-1].
#include <gtest/gtest.h>

#include "relstore/errors.h"
#include "relstore/storage.h"

namespace relstore {
namespace {

// The expected texts are Python's base64.encodebytes of the 8 big-endian bytes.
TEST(UndoId, MatchesZodbsBase64) {
  EXPECT_EQ(undo_id(Tid(0x03c41e9ea4444444ULL)), "A8QenqREREQ=");
  EXPECT_EQ(undo_id(Tid(1)), "AAAAAAAAAAE=");
  EXPECT_EQ(undo_id(Tid(0x7fffffffffffffffULL)), "f/////////8=");
  EXPECT_EQ(undo_id(Tid(~0ULL)), "//////////8=");
}

TEST(UndoId, ReadsBackWhatItWrites) {
  for (const uint64_t v : {0ULL, 1ULL, 0x03c41e9ea4444444ULL, 0xfedcba9876543210ULL, ~0ULL}) {
    EXPECT_EQ(tid_of_undo_id(undo_id(Tid(v))), Tid(v));
  }
  // With the newline encodebytes ends with.
  EXPECT_EQ(tid_of_undo_id("A8QenqREREQ=\n"), Tid(0x03c41e9ea4444444ULL));
}

TEST(UndoId, RefusesWhatIsNotOne) {
  for (const char* bad :
       {"", "A8QenqREREQ", "A8QenqREREQ==", "A8Qen*REREQ=", "A8QenqREREP=", "0x03c41e9ea4444444"}) {
    EXPECT_THROW(tid_of_undo_id(bad), UndoError) << bad;
  }
}

}  // namespace
}  // namespace relstore
