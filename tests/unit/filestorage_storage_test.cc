// FileStorage as a Storage: reads on a hand-built file, and restore/store commits.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "relstore/filestorage.h"
#include "relstore/timestamp.h"
#include "support/corpus.h"
#include "support/file_size_limit.h"
#include "support/raw_data_fs.h"
#include "support/temp_dir.h"

namespace relstore {
namespace {

using testing::RawDataFs;
using testing::TempDir;
using testing::with_back;
using testing::with_data;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

FileStorageOptions writable() {
  FileStorageOptions o;
  o.read_only = false;
  o.fsync_each_commit = false;  // tests do not need durability; close() still syncs
  return o;
}

// Begins a transaction at `tid` restoring `data` as `oid`, and votes it.
void restore_and_vote(StorageInstance& i, const TransactionMetaData& t, uint64_t tid, uint64_t oid,
                      const std::string& data) {
  i.tpc_begin(t, Tid(tid), ' ');
  i.restore(Oid(oid), Tid(tid), Bytes(data), t);
  i.tpc_vote(t);
}

// oid 1: a@10, b@11, undo to a@12 (back pointer), deleted@13.  oid 2: x@11.  oid 5: y@13.
std::string semantics_file(const TempDir& dir) {
  RawDataFs f;
  f.add(10, {with_data(0, "root"), with_data(1, "a")}, ' ', "alice", "first", "ext1");
  const uint64_t a = f.record_pos[1];
  f.add(11, {with_data(1, "b"), with_data(2, "x")}, ' ', "bob", "second");
  f.add(12, {with_back(1, a)}, ' ', "", "undo");
  f.add(13, {with_back(1, 0), with_data(5, "y")}, 'p');
  const std::string path = dir.sub("Data.fs");
  f.write(path);
  return path;
}

TEST(FileStorageStorage, LoadsFollowRevisionsAndBackPointers) {
  TempDir dir;
  auto s = open_file_storage(semantics_file(dir));
  auto i = s->new_instance();
  EXPECT_TRUE(s->is_read_only());
  EXPECT_EQ(i->load(Oid(2)).data, "x");
  EXPECT_EQ(i->load(Oid(2)).tid, Tid(11));
  EXPECT_THROW(i->load(Oid(1)), POSKeyError);  // deleted at 13
  EXPECT_THROW(i->load(Oid(99)), POSKeyError);
  EXPECT_EQ(i->last_transaction(), Tid(13));

  // load_before: newest strictly before, with the next revision's tid as end.
  auto r = i->load_before(Oid(1), Tid(12));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->data, "b");
  EXPECT_EQ(r->start, Tid(11));
  EXPECT_EQ(r->end, Tid(12));
  r = i->load_before(Oid(1), Tid(13));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->data, "a");  // through the back pointer
  EXPECT_EQ(r->start, Tid(12));
  EXPECT_EQ(r->end, Tid(13));
  EXPECT_THROW(i->load_before(Oid(1), Tid(14)), POSKeyError);  // deleted revision
  EXPECT_FALSE(i->load_before(Oid(1), Tid(10)));               // not yet created
  r = i->load_before(Oid(2), Tid(100));
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->end);
  EXPECT_THROW(i->load_before(Oid(99), Tid(100)), POSKeyError);

  EXPECT_EQ(i->load_serial(Oid(1), Tid(10)), "a");
  EXPECT_EQ(i->load_serial(Oid(1), Tid(11)), "b");
  EXPECT_EQ(i->load_serial(Oid(1), Tid(12)), "a");
  EXPECT_THROW(i->load_serial(Oid(1), Tid(13)), POSKeyError);
  EXPECT_THROW(i->load_serial(Oid(1), Tid(14)), POSKeyError);
  EXPECT_THROW(i->load_serial(Oid(2), Tid(10)), POSKeyError);
}

TEST(FileStorageStorage, HistoryIsNewestFirstWithMetadata) {
  TempDir dir;
  auto s = open_file_storage(semantics_file(dir));
  auto i = s->new_instance();
  auto h = i->history(Oid(1), 10);
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[0].tid, Tid(13));
  EXPECT_EQ(h[0].size, 0u);
  EXPECT_EQ(h[1].tid, Tid(12));
  EXPECT_EQ(h[1].description, "undo");
  EXPECT_EQ(h[1].size, 1u);
  EXPECT_EQ(h[3].tid, Tid(10));
  EXPECT_EQ(h[3].user, "alice");
  EXPECT_EQ(h[3].extension, "ext1");
  EXPECT_DOUBLE_EQ(h[3].time, TimeStamp(Tid(10)).unix_time());
  EXPECT_EQ(i->history(Oid(1), 2).size(), 2u);
  EXPECT_EQ(i->history(Oid(1)).size(), 1u);
  EXPECT_THROW(i->history(Oid(99), 1), POSKeyError);
}

TEST(FileStorageStorage, RecordIternextWalksLiveObjectsInOidOrder) {
  TempDir dir;
  auto s = open_file_storage(semantics_file(dir));
  auto i = s->new_instance();
  std::vector<std::pair<Oid, Tid>> seen;
  std::optional<Oid> next;
  do {
    auto r = i->record_iternext(next);
    ASSERT_TRUE(r);
    seen.emplace_back(r->oid, r->tid);
    next = r->next;
  } while (next);
  EXPECT_EQ(seen, (std::vector<std::pair<Oid, Tid>>{
                      {Oid(0), Tid(10)}, {Oid(2), Tid(11)}, {Oid(5), Tid(13)}}));
  EXPECT_EQ(i->record_iternext(Oid(3))->oid, Oid(5));
  EXPECT_FALSE(i->record_iternext(Oid(6)));
  EXPECT_EQ(s->len(), 3u);
  const StorageInfo info = s->info();
  EXPECT_EQ(info.backend, "file");
  EXPECT_EQ(info.transactions, 4u);
  EXPECT_EQ(info.last_tid, Tid(13));
  EXPECT_EQ(info.schema_version, "FS30");
}

TEST(FileStorageStorage, AnInstanceOutlivesItsStorageHandle) {
  TempDir dir;
  const std::string path = semantics_file(dir);
  auto i = open_file_storage(path)->new_instance();
  EXPECT_EQ(i->load(Oid(2)).data, "x");
}

TEST(FileStorageStorage, ReadOnlyRefusesWrites) {
  TempDir dir;
  auto s = open_file_storage(semantics_file(dir));
  auto i = s->new_instance();
  TransactionMetaData t;
  EXPECT_TRUE(i->is_read_only());
  EXPECT_THROW(i->new_oid(), ReadOnlyError);
  EXPECT_THROW(i->tpc_begin(t, Tid(20), ' '), ReadOnlyError);
  EXPECT_THROW(s->zap_all(), ReadOnlyError);
}

TEST(FileStorageStorage, IteratorHonoursBoundsAndSnapshot) {
  TempDir dir;
  auto s = open_file_storage(semantics_file(dir));
  auto it = s->new_instance()->iterator(Tid(11), Tid(12));
  TransactionRecord t;
  std::vector<Tid> tids;
  while (it->next(t)) tids.push_back(t.tid);
  EXPECT_EQ(tids, (std::vector<Tid>{Tid(11), Tid(12)}));
}

std::vector<TransactionRecord> all(std::unique_ptr<TransactionIterator> it) {
  std::vector<TransactionRecord> out;
  TransactionRecord t;
  while (it->next(t)) out.push_back(t);
  return out;
}

// Writes the transactions with restore, as convert does.
void restore_all(Storage& s, const std::vector<TransactionRecord>& txns) {
  auto i = s.new_instance();
  for (const auto& t : txns) {
    TransactionMetaData meta{t.user, t.description, t.extension};
    i->tpc_begin(meta, t.tid, t.status);
    for (const auto& r : t.records) i->restore(r.oid, r.tid, r.data, meta);
    i->tpc_vote(meta);
    EXPECT_EQ(i->tpc_finish(meta, {}), t.tid);
  }
}

void expect_same(const std::vector<TransactionRecord>& a, const std::vector<TransactionRecord>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t n = 0; n < a.size(); ++n) {
    EXPECT_EQ(a[n].tid, b[n].tid);
    EXPECT_EQ(a[n].status, b[n].status);
    EXPECT_EQ(a[n].user, b[n].user);
    EXPECT_EQ(a[n].description, b[n].description);
    EXPECT_EQ(a[n].extension, b[n].extension);
    ASSERT_EQ(a[n].records.size(), b[n].records.size());
    for (size_t k = 0; k < a[n].records.size(); ++k) {
      EXPECT_EQ(a[n].records[k].oid, b[n].records[k].oid);
      EXPECT_EQ(a[n].records[k].tid, b[n].records[k].tid);
      EXPECT_EQ(a[n].records[k].data, b[n].records[k].data);
    }
  }
}

TEST(FileStorageStorage, RestoreRoundTripIsDeepEqualForwardAndBackward) {
  TempDir dir;
  const auto source = all(iterate_file_storage(semantics_file(dir)));
  const std::string out = dir.sub("copy.fs");
  {
    auto s = open_file_storage(out, writable());
    restore_all(*s, source);
    s->close();
  }
  auto copy = all(iterate_file_storage(out));
  expect_same(source, copy);  // back pointers come back resolved, absent stays absent
  EXPECT_FALSE(copy[3].records[0].data);
  EXPECT_EQ(copy[2].records[0].data, "a");
  EXPECT_EQ(copy[3].status, 'p');
  EXPECT_EQ(copy[0].extension, "ext1");
  auto backward = all(iterate_file_storage_backward(out));
  std::reverse(backward.begin(), backward.end());
  expect_same(copy, backward);
  // The written file is a storage with the same answers.
  auto s = open_file_storage(out);
  EXPECT_EQ(s->new_instance()->load_serial(Oid(1), Tid(12)), "a");
  EXPECT_EQ(s->len(), 3u);
  EXPECT_EQ(slurp(out).substr(0, 4), "FS30");
}

TEST(FileStorageStorage, CorpusCopiedWithRestoreIsByteIdentical) {
  // The corpus was written by ZODB; the same transactions restored by relstore must give
  // the same bytes, prev pointers and all.
  RELSTORE_CODEC_CORPUS(corpus);
  TempDir dir;
  const std::string out = dir.sub("copy.fs");
  {
    auto s = open_file_storage(out, writable());
    restore_all(*s, all(iterate_file_storage(corpus)));
    s->close();
  }
  EXPECT_TRUE(slurp(out) == slurp(corpus));
}

TEST(FileStorageStorage, CorpusAsAStorageLoadsEveryNewestRevision) {
  RELSTORE_CODEC_CORPUS(corpus);
  std::map<Oid, std::pair<Tid, Bytes>> newest;
  for (const auto& t : all(iterate_file_storage(corpus))) {
    for (const auto& r : t.records) newest[r.oid] = {r.tid, *r.data};
  }
  auto s = open_file_storage(corpus);
  EXPECT_EQ(s->len(), newest.size());
  EXPECT_EQ(s->size(), std::filesystem::file_size(corpus));
  auto i = s->new_instance();
  size_t walked = 0;
  std::optional<Oid> next;
  do {
    auto r = i->record_iternext(next);
    ASSERT_TRUE(r);
    ASSERT_TRUE(newest.count(r->oid));
    EXPECT_EQ(r->tid, newest[r->oid].first);
    EXPECT_EQ(r->data, newest[r->oid].second);
    EXPECT_EQ(i->load(r->oid).data, r->data);
    next = r->next;
    ++walked;
  } while (next);
  EXPECT_EQ(walked, newest.size());
}

TEST(FileStorageStorage, WriterLocksTheFileAndAppends) {
  TempDir dir;
  const std::string path = dir.sub("Data.fs");
  auto s = open_file_storage(path, writable());
  EXPECT_EQ(slurp(path + ".lock"), " " + std::to_string(getpid()) + "\n");
  // Another process cannot write it (this process shares its one writer, see below).
  const pid_t child = fork();
  if (child == 0) {
    try {
      open_file_storage(path, writable());
      _exit(1);
    } catch (const StorageError& e) {
      _exit(std::string(e.what()).find("in use by another writer") != std::string::npos ? 0 : 2);
    }
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  // A second writer in this process shares the storage and sees its commits.
  auto second = open_file_storage(path, writable());
  auto i = s->new_instance();
  TransactionMetaData t{"me", "one", ""};
  restore_and_vote(*i, t, 100, 0, "root");
  i->tpc_finish(t, {});
  // A reader can open it while it is locked, and sees committed transactions only.
  EXPECT_EQ(open_file_storage(path)->new_instance()->load(Oid(0)).data, "root");
  EXPECT_EQ(second->new_instance()->load(Oid(0)).data, "root");
  s->close();  // the file stays open for `second`
  EXPECT_EQ(second->len(), 1u);
  second->close();  // the last handle: synced and unlocked
  s.reset();

  // Reopened for writing: appends; TIDs must increase.
  std::ofstream(path + ".index") << "stale";
  s = open_file_storage(path, writable());
  EXPECT_FALSE(std::filesystem::exists(path + ".index"));
  i = s->new_instance();
  TransactionMetaData t2{"", "two", ""};
  EXPECT_THROW(i->tpc_begin(t2, Tid(100), ' '), StorageTransactionError);
  restore_and_vote(*i, t2, 101, 0, "root2");
  i->tpc_finish(t2, {});
  s->close();
  EXPECT_EQ(all(iterate_file_storage(path)).size(), 2u);
  EXPECT_EQ(all(iterate_file_storage_backward(path)).size(), 2u);
}

// Zeros a crash left at the end (see filestorage_malformed_test.cc) go aside like a
// truncated tail, and the file takes commits again.
// After the largest OID there is none left; new_oid must not wrap around to the root's.
TEST(FileStorageStorage, NewOidAfterTheLargestIsAnError) {
  TempDir dir;
  RawDataFs f;
  f.add(1, {with_data(0, "root"), with_data(~uint64_t{0}, "last")});
  const std::string path = dir.sub("Data.fs");
  f.write(path);
  auto s = open_file_storage(path, writable());
  EXPECT_THROW(s->new_instance()->new_oid(), StorageError);
}

TEST(FileStorageStorage, ZeroFilledTailIsMovedAsideBeforeAppending) {
  TempDir dir;
  RawDataFs f;
  f.add(1, {with_data(0, "root")});
  const size_t good = f.bytes.size();
  f.bytes.append(8192, '\0');
  const std::string path = dir.sub("Data.fs");
  f.write(path);
  auto s = open_file_storage(path, writable());
  EXPECT_EQ(std::filesystem::file_size(path), good);
  EXPECT_EQ(slurp(path + ".tr0"), std::string(8192, '\0'));
  auto i = s->new_instance();
  TransactionMetaData t;
  restore_and_vote(*i, t, 2, 0, "after");
  i->tpc_finish(t, {});
  s->close();
  EXPECT_EQ(all(iterate_file_storage(path)).size(), 2u);
}

TEST(FileStorageStorage, TruncatedTailIsMovedAsideBeforeAppending) {
  TempDir dir;
  RawDataFs f;
  f.add(1, {with_data(0, "root")});
  const size_t good = f.bytes.size();
  f.add(2, {with_data(0, "lost")});
  f.bytes.resize(f.bytes.size() - 3);
  const std::string path = dir.sub("Data.fs");
  f.write(path);
  std::vector<std::string> warnings;
  FileStorageOptions o = writable();
  o.on_warning = [&](const std::string& w) { warnings.push_back(w); };
  auto s = open_file_storage(path, o);
  EXPECT_EQ(warnings.size(), 2u);  // the truncation, then the move
  EXPECT_EQ(std::filesystem::file_size(path), good);
  EXPECT_EQ(slurp(path + ".tr0"), f.bytes.substr(good));
  auto i = s->new_instance();
  TransactionMetaData t;
  restore_and_vote(*i, t, 3, 0, "new");
  i->tpc_finish(t, {});
  s->close();
  const auto txns = all(iterate_file_storage(path));
  ASSERT_EQ(txns.size(), 2u);
  EXPECT_EQ(txns[1].records[0].data, "new");
}

TEST(FileStorageStorage, AbortWritesNothingAndOversizedMetadataIsRefused) {
  TempDir dir;
  const std::string path = dir.sub("Data.fs");
  auto s = open_file_storage(path, writable());
  auto i = s->new_instance();
  TransactionMetaData t{"", "", ""};
  restore_and_vote(*i, t, 5, 0, "x");
  i->tpc_abort(t);
  EXPECT_EQ(std::filesystem::file_size(path), 4u);
  TransactionMetaData big{"", std::string(70000, 'd'), ""};
  try {
    i->tpc_begin(big, Tid(6), ' ');
    ADD_FAILURE() << "no error";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("description of 70000 bytes"), std::string::npos);
  }
  // The commit lock was not left taken.
  i->tpc_begin(t, Tid(7), ' ');
  i->tpc_abort(t);
  EXPECT_THROW(i->tpc_begin(t, Tid(8), 'c'), StorageTransactionError);
}

// As ZODB's FileStorage: the transaction is written at vote with status 'c', which readers
// stop at, and finish only writes its status byte; an abort after vote truncates it away.
TEST(FileStorageStorage, VoteWritesTheTransactionAsInProgressAndFinishMarksIt) {
  TempDir dir;
  const std::string path = dir.sub("Data.fs");
  auto s = open_file_storage(path, writable());
  auto i = s->new_instance();
  TransactionMetaData t{"", "", ""};
  restore_and_vote(*i, t, 5, 0, "root");
  const std::string voted = slurp(path);
  ASSERT_GT(voted.size(), 4u + 23u);
  EXPECT_EQ(voted[4 + 16], 'c');
  // Another reader opens the file meanwhile: it stops at the unfinished transaction.
  EXPECT_EQ(open_file_storage(path)->len(), 0u);
  i->tpc_finish(t, {});
  const std::string finished = slurp(path);
  EXPECT_EQ(finished.size(), voted.size());
  EXPECT_EQ(finished[4 + 16], ' ');
  EXPECT_EQ(open_file_storage(path)->new_instance()->load(Oid(0)).data, "root");

  TransactionMetaData t2{"", "", ""};
  restore_and_vote(*i, t2, 6, 0, "aborted");
  EXPECT_GT(std::filesystem::file_size(path), finished.size());
  i->tpc_abort(t2);
  EXPECT_EQ(slurp(path), finished);
}

// What can fail writing (here the process's file size limit, as a full disk would) fails
// the vote, with the file as it was; the finish that follows a successful vote does not
// fail for it.
TEST(FileStorageStorage, AWriteThatFailsFailsTheVoteNotTheFinish) {
  TempDir dir;
  const std::string path = dir.sub("Data.fs");
  auto s = open_file_storage(path, writable());
  auto i = s->new_instance();
  TransactionMetaData t{"", "", ""};
  restore_and_vote(*i, t, 5, 0, "root");
  i->tpc_finish(t, {});
  const std::string before = slurp(path);

  TransactionMetaData big{"", "", ""};
  i->tpc_begin(big, Tid(6), ' ');
  i->restore(Oid(1), Tid(6), Bytes(std::string(10000, 'x')), big);
  bool voted = true;
  try {
    const testing::FileSizeLimit limit(before.size() + 100);
    i->tpc_vote(big);
  } catch (const StorageError& e) {
    voted = false;
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_FALSE(voted) << "the vote wrote nothing, so a finish would have had to";
  i->tpc_abort(big);
  EXPECT_EQ(slurp(path), before);
  // The storage goes on.
  TransactionMetaData t2{"", "", ""};
  restore_and_vote(*i, t2, 7, 1, "small");
  i->tpc_finish(t2, {});
  EXPECT_EQ(open_file_storage(path)->new_instance()->load(Oid(1)).data, "small");
}

TEST(FileStorageStorage, StoreChecksSerialsAndNewOidCountsUp) {
  TempDir dir;
  const std::string path = dir.sub("Data.fs");
  auto s = open_file_storage(path, writable());
  auto a = s->new_instance();
  auto b = s->new_instance();
  EXPECT_EQ(a->new_oid(), Oid(1));
  TransactionMetaData t1;
  a->tpc_begin(t1, std::nullopt, ' ');
  a->store(Oid(0), std::nullopt, "root", t1);
  a->store(Oid(1), Tid(0), "one", t1);
  EXPECT_TRUE(a->tpc_vote(t1).empty());
  const Tid tid1 = a->tpc_finish(t1, {});
  EXPECT_GT(tid1, Tid(0));
  EXPECT_EQ(a->load(Oid(1)).tid, tid1);

  EXPECT_TRUE(b->poll_invalidations()->empty());
  TransactionMetaData t2;
  a->tpc_begin(t2, std::nullopt, ' ');
  a->store(Oid(1), tid1, "one v2", t2);
  a->tpc_vote(t2);
  const Tid tid2 = a->tpc_finish(t2, {});
  EXPECT_GT(tid2, tid1);
  EXPECT_EQ(*b->poll_invalidations(), std::vector<Oid>{Oid(1)});
  EXPECT_EQ(b->load(Oid(1)).data, "one v2");

  TransactionMetaData t3;
  b->tpc_begin(t3, std::nullopt, ' ');
  b->store(Oid(1), tid1, "stale", t3);
  try {
    b->tpc_vote(t3);  // serials are checked at vote, under the commit lock
    ADD_FAILURE() << "no conflict";
  } catch (const ConflictError& e) {
    EXPECT_EQ(e.oid(), Oid(1));
    EXPECT_EQ(e.serials(), std::make_pair(tid2, tid1));
  }
  b->tpc_abort(t3);
  b->tpc_begin(t3, std::nullopt, ' ');
  b->check_current_serial(Oid(0), Tid(1), t3);
  EXPECT_THROW(b->tpc_vote(t3), ReadConflictError);
  b->tpc_abort(t3);
  b->tpc_begin(t3, std::nullopt, ' ');
  b->delete_object(Oid(1), tid2, t3);
  b->tpc_vote(t3);
  b->tpc_finish(t3, {});
  EXPECT_THROW(b->load(Oid(1)), POSKeyError);
  EXPECT_EQ(s->len(), 1u);
  EXPECT_EQ(a->new_oid(), Oid(2));
}

// A conflict resolver that returns an empty record is refused at vote: plen 0 means "a
// back pointer follows" in Data.fs, and writing it would make the file unreadable.
TEST(FileStorageStorage, AnEmptyResolvedRecordIsRefusedAtVote) {
  TempDir dir;
  const std::string path = dir.sub("Data.fs");
  auto s = open_file_storage(path, writable());
  s->set_conflict_resolver([](const ConflictInput&) { return Bytes(); });
  auto a = s->new_instance();
  TransactionMetaData t1;
  a->tpc_begin(t1, std::nullopt, ' ');
  a->store(Oid(1), std::nullopt, "one", t1);
  a->tpc_vote(t1);
  const Tid tid1 = a->tpc_finish(t1, {});
  TransactionMetaData t2;
  a->tpc_begin(t2, std::nullopt, ' ');
  a->store(Oid(1), tid1, "two", t2);
  a->tpc_vote(t2);
  a->tpc_finish(t2, {});
  TransactionMetaData t3;
  a->tpc_begin(t3, std::nullopt, ' ');
  a->store(Oid(1), tid1, "stale, resolved to nothing", t3);
  EXPECT_THROW(a->tpc_vote(t3), StorageError);
  a->tpc_abort(t3);
  s->close();
  auto reopened = open_file_storage(path, writable());
  EXPECT_EQ(reopened->new_instance()->load(Oid(1)).data, "two");
}

// zap_all (convert --clear) while an iterator of this process still reads the file: the
// iterator goes on over the old content. The file was truncated under its mapping, and the
// next read past the new end faulted (SIGBUS).
TEST(FileStorageStorage, ZapAllLeavesAnOpenIteratorReadingTheOldFile) {
  TempDir dir;
  const std::string path = dir.sub("Data.fs");
  auto s = open_file_storage(path, writable());
  auto inst = s->new_instance();
  for (uint64_t oid = 1; oid <= 3; ++oid) {
    TransactionMetaData txn;
    inst->tpc_begin(txn, std::nullopt, ' ');
    inst->store(Oid(oid), std::nullopt, std::string(100000, static_cast<char>('a' + oid)), txn);
    inst->tpc_vote(txn);
    inst->tpc_finish(txn, {});
  }
  auto it = inst->iterator();
  TransactionRecord t;
  ASSERT_TRUE(it->next(t));
  s->zap_all();
  int seen = 1;
  while (it->next(t)) {
    ASSERT_EQ(t.records.size(), 1u);
    EXPECT_EQ(t.records[0].data->size(), 100000u);
    ++seen;
  }
  EXPECT_EQ(seen, 3);
  EXPECT_EQ(s->len(), 0u);
  TransactionMetaData txn;
  inst->tpc_begin(txn, std::nullopt, ' ');
  inst->store(Oid(9), std::nullopt, "after the zap", txn);
  inst->tpc_vote(txn);
  inst->tpc_finish(txn, {});
  s->close();
  auto reopened = open_file_storage(path, writable());
  EXPECT_EQ(reopened->len(), 1u);
  EXPECT_EQ(reopened->new_instance()->load(Oid(9)).data, "after the zap");
  EXPECT_FALSE(std::filesystem::exists(path + ".zap.tmp"));
}

TEST(FileStorageStorage, OpenStorageReadsFileUrisReadOnlyUnlessAskedToWrite) {
  TempDir dir;
  const std::string path = semantics_file(dir);
  auto s = open_storage("file://" + path);
  EXPECT_TRUE(s->is_read_only());
  EXPECT_EQ(s->info().backend, "file");
  s = open_storage("file://" + path + "?write=1");
  EXPECT_FALSE(s->is_read_only());
  s->close();
  auto fresh = open_storage("file://" + dir.sub("new.fs"));
  EXPECT_FALSE(fresh->is_read_only());
  EXPECT_THROW(open_storage("file://" + dir.sub("missing.fs") + "?read_only=1"), StorageError);
  EXPECT_THROW(open_storage("file://" + path + "?history=free"), ConfigError);
}

}  // namespace
}  // namespace relstore
