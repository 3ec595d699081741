// Damaged Data.fs files: each gives an error naming the file and byte offset, or (a
// truncated tail, an unfinished commit) a warning and a clean stop.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "relstore/filestorage.h"
#include "support/raw_data_fs.h"
#include "support/temp_dir.h"

namespace relstore {
namespace {

using testing::RawDataFs;
using testing::TempDir;
using testing::with_back;
using testing::with_data;

struct Outcome {
  std::vector<Tid> tids;
  std::vector<std::string> warnings;
};

Outcome read(const std::string& path) {
  Outcome o;
  auto it = iterate_file_storage(path, std::nullopt, std::nullopt,
                                 [&](const std::string& w) { o.warnings.push_back(w); });
  TransactionRecord t;
  while (it->next(t)) o.tids.push_back(t.tid);
  return o;
}

// Reads `f` and expects a FileStorageError at `offset` whose message contains `words`.
void expect_error(const RawDataFs& f, uint64_t offset, const std::string& words) {
  TempDir dir;
  const std::string path = dir.sub("Data.fs");
  f.write(path);
  try {
    read(path);
    ADD_FAILURE() << "no error; expected one at offset " << offset << " about '" << words << "'";
  } catch (const FileStorageError& e) {
    EXPECT_EQ(e.offset(), offset) << e.what();
    EXPECT_EQ(e.path(), path);
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find("byte offset " + std::to_string(offset)), std::string::npos) << what;
    EXPECT_NE(what.find(words), std::string::npos) << what;
  }
}

RawDataFs two_transactions() {
  RawDataFs f;
  f.add(100, {with_data(0, "root"), with_data(1, "one")});
  f.add(101, {with_data(1, "one, again")});
  return f;
}

TEST(FileStorageMalformed, BadMagic) {
  RawDataFs f("FS99");
  f.add(1, {with_data(0, "x")});
  expect_error(f, 0, "bad magic");
}

TEST(FileStorageMalformed, EmptyFile) { expect_error(RawDataFs(""), 0, "empty file"); }

TEST(FileStorageMalformed, TruncatedTailWarnsAndStopsCleanly) {
  TempDir dir;
  const RawDataFs f = two_transactions();
  const uint64_t second = f.record_pos.back() - 23;  // header of the second transaction
  for (uint64_t cut : {second + 5, second + 30, f.bytes.size() - 1}) {
    RawDataFs g = f;
    g.bytes.resize(cut);
    g.write(dir.sub("Data.fs"));
    const Outcome o = read(dir.sub("Data.fs"));
    EXPECT_EQ(o.tids, std::vector<Tid>{Tid(100)}) << "cut at " << cut;
    ASSERT_EQ(o.warnings.size(), 1u);
    EXPECT_NE(o.warnings[0].find("truncated"), std::string::npos) << o.warnings[0];
    EXPECT_NE(o.warnings[0].find(std::to_string(second)), std::string::npos) << o.warnings[0];
  }
}

// A crash can leave zeros where the file's last transaction was to go (the size reached
// the disk, the data did not): a warning and a clean stop, as for a truncated tail.
TEST(FileStorageMalformed, ZeroFilledTailWarnsAndStopsCleanly) {
  TempDir dir;
  RawDataFs f = two_transactions();
  const uint64_t end = f.bytes.size();
  f.bytes.append(4096, '\0');
  f.write(dir.sub("Data.fs"));
  const Outcome o = read(dir.sub("Data.fs"));
  EXPECT_EQ(o.tids, (std::vector<Tid>{Tid(100), Tid(101)}));
  ASSERT_EQ(o.warnings.size(), 1u);
  EXPECT_NE(o.warnings[0].find("4096 zero bytes from byte offset " + std::to_string(end)),
            std::string::npos)
      << o.warnings[0];
}

// A crash can leave the first bytes of an appended header and zeros after them (the new
// size reached the disk, the page with the rest did not): a tail, as ZODB takes it, with a
// warning; a writable open sets it aside and appends after the last complete transaction.
TEST(FileStorageMalformed, AHeaderTornByACrashIsATail) {
  for (const size_t kept : {1u, 8u, 12u, 16u}) {  // up to the status byte, as ZODB sees it
    TempDir dir;
    RawDataFs f = two_transactions();
    const uint64_t end = f.bytes.size();
    RawDataFs next = two_transactions();
    next.add(102, {with_data(1, "lost in the crash")});
    f.bytes += next.bytes.substr(end, kept);
    f.bytes.append(4096 - kept, '\0');
    f.write(dir.sub("Data.fs"));
    const Outcome o = read(dir.sub("Data.fs"));
    EXPECT_EQ(o.tids, (std::vector<Tid>{Tid(100), Tid(101)})) << kept;
    ASSERT_EQ(o.warnings.size(), 1u) << kept;
    EXPECT_NE(o.warnings[0].find("byte offset " + std::to_string(end)), std::string::npos)
        << o.warnings[0];
    FileStorageOptions writable;
    writable.read_only = false;
    writable.on_warning = [](const std::string&) {};
    auto st = open_file_storage(dir.sub("Data.fs"), writable);
    auto inst = st->new_instance();
    TransactionMetaData txn{"", "", ""};
    inst->tpc_begin(txn);
    inst->store(Oid(1), Tid(101), "after the crash", txn);
    inst->tpc_vote(txn);
    inst->tpc_finish(txn);
    EXPECT_EQ(inst->load(Oid(1)).data, "after the crash") << kept;
  }
}

// An oid field damaged in the file: the record's previous revision belongs to another
// oid. Opening the storage says so, naming the offset, rather than serving (or copying)
// the record as another object.
TEST(FileStorageMalformed, ARecordWhosePreviousRevisionIsAnotherOidsIsAnError) {
  TempDir dir;
  RawDataFs f = two_transactions();
  const uint64_t damaged = f.record_pos.back();
  f.poke64(damaged, 7);  // the oid field of oid 1's second revision
  f.write(dir.sub("Data.fs"));
  try {
    open_file_storage(dir.sub("Data.fs"));
    ADD_FAILURE() << "opened";
  } catch (const FileStorageError& e) {
    EXPECT_EQ(e.offset(), damaged + 16) << e.what();
    EXPECT_NE(std::string(e.what()).find("points to a record of oid 0x0000000000000001"),
              std::string::npos)
        << e.what();
  }
}

// A writable open that refuses the file leaves ZODB's index of it alone (it was removed
// before the file was read).
TEST(FileStorageMalformed, AFileRefusedForWritingKeepsItsIndex) {
  TempDir dir;
  RawDataFs f;
  f.add(5, {with_data(1, "a")}, 'x');
  f.write(dir.sub("Data.fs"));
  std::ofstream(dir.sub("Data.fs.index")) << "ZODB's index";
  FileStorageOptions writable;
  writable.read_only = false;
  EXPECT_THROW(open_file_storage(dir.sub("Data.fs"), writable), FileStorageError);
  EXPECT_TRUE(std::filesystem::exists(dir.sub("Data.fs.index")));
}

// What stops reading at a crash's tail is damage when a complete transaction still ends
// the file after it: a length that runs past the end, a 'c' status. An error, never a
// quietly shorter history. (A 'c' transaction that is the last one stays a tail:
// UnfinishedCommitStopsReadingWithAWarning.)
TEST(FileStorageMalformed, DamageBeforeTheLastTransactionIsAnErrorNotATail) {
  RawDataFs f;
  f.add(100, {with_data(0, "root")});
  const uint64_t second = f.add(101, {with_data(1, "one")});
  f.add(102, {with_data(1, "two")});

  RawDataFs long_length = f;
  long_length.poke64(second + 8, 0x10000000);
  expect_error(long_length, second, "damaged here, not cut short");

  RawDataFs unfinished = f;
  unfinished.bytes[second + 16] = 'c';
  expect_error(unfinished, second, "damaged here, not cut short");
}

// ZODB truncates an unfinished transaction when its commit aborts after the vote. A reader
// that mapped the file before must stop where the file now ends, not fault on the pages
// past it (SIGBUS): here the unfinished transaction starts on a page boundary.
TEST(FileStorageMalformed, AFileCutWhileBeingReadEndsReadingCleanly) {
  TempDir dir;
  RawDataFs f;
  f.add(1, {with_data(0, std::string(8192 - 4 - 23 - 42 - 8, 'a'))});
  ASSERT_EQ(f.bytes.size(), 8192u);
  f.add(2, {with_data(0, std::string(20000, 'b'))}, 'c');
  const std::string path = dir.sub("Data.fs");
  f.write(path);
  std::vector<std::string> warnings;
  auto it = iterate_file_storage(path, std::nullopt, std::nullopt,
                                 [&](const std::string& w) { warnings.push_back(w); });
  std::filesystem::resize_file(path, 8192);  // the abort
  TransactionRecord t;
  std::vector<Tid> tids;
  while (it->next(t)) tids.push_back(t.tid);
  EXPECT_EQ(tids, std::vector<Tid>{Tid(1)});
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("8192"), std::string::npos) << warnings[0];
  // Walking backward from the old end: an error naming the offset, not a fault.
  f.write(path);
  auto back = iterate_file_storage_backward(path);
  std::filesystem::resize_file(path, 8192);
  try {
    back->next(t);
    ADD_FAILURE() << "read a transaction past the file's end";
  } catch (const FileStorageError& e) {
    EXPECT_NE(std::string(e.what()).find("shorter"), std::string::npos) << e.what();
  }
}

TEST(FileStorageMalformed, TrailingLengthMismatch) {
  RawDataFs f = two_transactions();
  const uint64_t trailer = f.bytes.size() - 8;
  f.poke64(trailer, 12345);
  expect_error(f, trailer, "trailing transaction length 12345");
}

TEST(FileStorageMalformed, VersionedRecordIsRejected) {
  RawDataFs f;
  auto r = with_data(7, "v");
  r.vlen = 3;
  f.add(1, {r});
  expect_error(f, f.record_pos[0] + 32, "version");
}

TEST(FileStorageMalformed, BackPointerOutsideTheFile) {
  RawDataFs f;
  f.add(1, {with_data(1, "a")});
  f.add(2, {with_back(1, 1'000'000)});
  expect_error(f, f.record_pos[1] + 42, "outside the file");
}

TEST(FileStorageMalformed, BackPointerToAnotherOid) {
  RawDataFs f;
  f.add(1, {with_data(1, "a"), with_data(2, "b")});
  f.add(2, {with_back(1, f.record_pos[1])});
  expect_error(f, f.record_pos[2] + 42, "oid 0x0000000000000002");
}

TEST(FileStorageMalformed, BackPointerIntoTheMiddleOfARecord) {
  RawDataFs f;
  f.add(1, {with_data(1, std::string(100, 'a'))});
  f.add(2, {with_back(1, f.record_pos[0] + 50)});
  expect_error(f, f.record_pos[1] + 42, "back pointer");
}

// A pickle holding bytes that look like a record of oid 1 in the first transaction (tid 1,
// at offset 4) with the given plen, followed by 16 bytes.
std::string pickle_with_a_fake_record(uint64_t plen) {
  fs::DataHeader fake;
  fake.oid = Oid(1);
  fake.tid = Tid(1);
  fake.tloc = 4;
  fake.plen = plen;
  std::string pickle;
  fs::append_data_header(pickle, fake);
  return pickle + std::string(16, '\0');
}

// Bytes inside a pickle that look like a record of the same oid, tid and transaction are
// still not a record: a back pointer to them is an error, not those bytes as the data.
// The second fake's plen (near 2**64) must not pass the size check by wrapping around.
TEST(FileStorageMalformed, BackPointerToAFakeRecordInsideAPickle) {
  for (uint64_t plen : {uint64_t{16}, ~uint64_t{0} - 40}) {
    RawDataFs f;
    f.add(1, {with_data(1, pickle_with_a_fake_record(plen))});
    f.add(2, {with_back(1, f.record_pos[0] + fs::kDataHeaderSize)});
    expect_error(f, f.record_pos[1] + 42, "does not point to a valid data record");
  }
}

TEST(FileStorageMalformed, TransactionOffsetOfARecordIsChecked) {
  RawDataFs f = two_transactions();
  f.poke64(f.record_pos[2] + 24, 4);  // the first transaction's offset
  expect_error(f, f.record_pos[2] + 24, "tloc");
}

TEST(FileStorageMalformed, RecordsMustEndExactlyAtTheTrailer) {
  RawDataFs f;
  f.add(1, {with_data(1, "a")});
  // Five stray bytes between the last record and the trailer, with both lengths adjusted.
  const uint64_t trailer = f.bytes.size() - 8;
  f.bytes.insert(trailer, "junk!");
  f.poke64(4 + 8, trailer - 4 + 5);
  f.poke64(f.bytes.size() - 8, trailer - 4 + 5);
  expect_error(f, trailer, "run past the end of the transaction");
}

TEST(FileStorageMalformed, RecordLongerThanItsTransaction) {
  RawDataFs f;
  f.add(1, {with_data(1, "abc")});
  f.poke64(f.record_pos[0] + 34, 1000);  // plen
  expect_error(f, f.record_pos[0], "runs past the end");
}

TEST(FileStorageMalformed, TidsMustIncrease) {
  RawDataFs f;
  f.add(5, {with_data(1, "a")});
  const uint64_t second = f.add(5, {with_data(1, "b")});
  expect_error(f, second, "not greater");
}

TEST(FileStorageMalformed, UnknownStatus) {
  RawDataFs f;
  const uint64_t t = f.add(5, {with_data(1, "a")}, 'x');
  expect_error(f, t + 16, "invalid transaction status 'x'");
}

TEST(FileStorageMalformed, UnfinishedCommitStopsReadingWithAWarning) {
  TempDir dir;
  RawDataFs f;
  f.add(1, {with_data(1, "a")});
  const uint64_t c = f.add(2, {with_data(1, "b")}, 'c');
  f.write(dir.sub("Data.fs"));
  const Outcome o = read(dir.sub("Data.fs"));
  EXPECT_EQ(o.tids, std::vector<Tid>{Tid(1)});
  ASSERT_EQ(o.warnings.size(), 1u);
  EXPECT_NE(o.warnings[0].find("'c'"), std::string::npos);
  EXPECT_NE(o.warnings[0].find(std::to_string(c)), std::string::npos);
}

TEST(FileStorageMalformed, UndoneTransactionIsSkipped) {
  TempDir dir;
  RawDataFs f;
  f.add(1, {with_data(1, "a")});
  f.add(2, {with_data(1, "b")}, 'u');
  f.add(3, {with_data(2, "c")});
  f.write(dir.sub("Data.fs"));
  const Outcome o = read(dir.sub("Data.fs"));
  EXPECT_EQ(o.tids, (std::vector<Tid>{Tid(1), Tid(3)}));
  EXPECT_TRUE(o.warnings.empty());
  auto back = iterate_file_storage_backward(dir.sub("Data.fs"));
  TransactionRecord t;
  std::vector<Tid> tids;
  while (back->next(t)) tids.push_back(t.tid);
  EXPECT_EQ(tids, (std::vector<Tid>{Tid(3), Tid(1)}));
}

TEST(FileStorageMalformed, BackwardReadingRejectsABadTrailer) {
  TempDir dir;
  RawDataFs f = two_transactions();
  f.poke64(f.bytes.size() - 8, 9'999'999);
  f.write(dir.sub("Data.fs"));
  auto it = iterate_file_storage_backward(dir.sub("Data.fs"));
  TransactionRecord t;
  try {
    it->next(t);
    ADD_FAILURE() << "no error";
  } catch (const FileStorageError& e) {
    EXPECT_EQ(e.offset(), f.bytes.size() - 8) << e.what();
  }
}

}  // namespace
}  // namespace relstore
