// Modes and durability: conformance.md lines 31–33, 35 (deletions) and 36.
#include <algorithm>
#include <limits>

#include "conformance/fixture.h"

namespace relstore::conformance {
namespace {

using ModesAndDurability = StorageTest;
const Tid kMax(std::numeric_limits<uint64_t>::max());

// Line 31.
TEST_P(ModesAndDurability, ReadOnlyModeRefusesWritesAndServesReads) {
  const Tid t1 = create(1, "v1");
  auto ro_storage = reopen("read_only=true");
  EXPECT_TRUE(ro_storage->is_read_only());
  auto ro = ro_storage->new_instance();
  EXPECT_TRUE(ro->is_read_only());
  EXPECT_EQ(ro->load(Oid(1)).data, "v1");
  EXPECT_EQ(ro->load_serial(Oid(1), t1), "v1");
  EXPECT_THROW(ro->new_oid(), ReadOnlyError);
  TransactionMetaData txn{"", "", ""};
  EXPECT_THROW(ro->tpc_begin(txn), ReadOnlyError);
  EXPECT_THROW(ro->store(Oid(1), t1, "x", txn), ReadOnlyError);
  EXPECT_THROW(ro->delete_object(Oid(1), t1, txn), ReadOnlyError);
  EXPECT_THROW(ro->restore(Oid(1), t1, std::string("x"), txn), ReadOnlyError);
  EXPECT_THROW(ro->undo(undo_id(t1), txn), ReadOnlyError);
  EXPECT_THROW(ro_storage->zap_all(), ReadOnlyError);
  EXPECT_EQ(inst_->load(Oid(1)).data, "v1");
}

// Line 32.
TEST_P(ModesAndDurability, AfterCloseAndReopenEveryObjectLoadsIdenticalBytes) {
  std::map<uint64_t, std::string> data;
  for (uint64_t i = 0; i < 30; ++i) data[i] = std::string(i * 37 + 1, static_cast<char>(i));
  const Tid tid = commit(*inst_, data);
  inst_.reset();
  storage_->close();
  storage_.reset();
  auto st = open_storage(uri_);
  auto inst = st->new_instance();
  for (const auto& [oid, bytes] : data) {
    const auto r = inst->load(Oid(oid));
    EXPECT_EQ(r.data, bytes);
    EXPECT_EQ(r.tid, tid);
  }
}

// A closed storage takes no more work: new OIDs and commits are refused with a
// StorageError (the database backends opened and pooled new server sessions after close).
TEST_P(ModesAndDurability, AClosedStorageRefusesNewWork) {
  create(1, "v1");
  storage_->close();
  EXPECT_THROW(inst_->new_oid(), StorageError);
  TransactionMetaData txn{"", "", ""};
  EXPECT_THROW(
      {
        inst_->tpc_begin(txn);
        inst_->store(Oid(2), std::nullopt, "after close", txn);
        inst_->tpc_vote(txn);
        inst_->tpc_finish(txn);
      },
      StorageError);
  inst_->tpc_abort(txn);
  EXPECT_THROW(reopen()->new_instance()->load(Oid(2)), POSKeyError);
}

// An iterator, like an instance, keeps what it reads from alive: it outlives the handle
// of the storage it came from (the PostgreSQL and MySQL ones used the freed adapter).
TEST_P(ModesAndDurability, AnIteratorOutlivesItsStorageHandle) {
  create(1, "v1");
  auto st = reopen();
  auto inst = st->new_instance();
  auto it = inst->iterator(std::nullopt, std::nullopt);
  inst.reset();
  st.reset();
  TransactionRecord rec;
  ASSERT_TRUE(it->next(rec));
  EXPECT_FALSE(it->next(rec));
  it.reset();
}

// Line 32 with more than one transaction: revisions, a deletion, a large OID and an
// empty commit, all read back by a storage opened anew (not this process's own handle).
TEST_P(ModesAndDurability, AfterCloseAndReopenHistoryDeletionsAndTheAllocatorAreKept) {
  const Tid t1 = create(1, "v1");
  const Tid t2 = commit(*inst_, {{1, "v2"}}, {{1, t1}});
  const Tid t3 = commit(*inst_, {{1, "v3"}, {70000, "far"}}, {{1, t2}});
  const Tid t4 = create(2, "to delete");
  const Tid t5 = remove(2, t4);
  TransactionMetaData empty{"", "", ""};
  inst_->tpc_begin(empty);
  inst_->tpc_vote(empty);
  const Tid t6 = inst_->tpc_finish(empty);
  ASSERT_GT(t6, t5);
  inst_.reset();
  storage_->close();
  storage_.reset();

  auto st = open_storage(uri_);
  auto inst = st->new_instance();
  inst->poll_invalidations();
  EXPECT_EQ(inst->load(Oid(1)).data, "v3");
  EXPECT_EQ(inst->load(Oid(1)).tid, t3);
  EXPECT_EQ(inst->load(Oid(70000)).data, "far");
  EXPECT_THROW(inst->load(Oid(2)), POSKeyError);
  EXPECT_EQ(st->len(), 2u);
  if (hp()) {
    EXPECT_EQ(inst->load_serial(Oid(1), t1), "v1");
    EXPECT_EQ(inst->load_serial(Oid(1), t2), "v2");
    // The empty transaction is a transaction of the history like any other.
    EXPECT_EQ(inst->last_transaction(), t6);
  } else {
    // History-free keeps no row for an empty transaction: the newest it knows is the
    // deletion's (conformance.md line 9 lists empty transactions for the iterator, which
    // a history-free database, as RelStorage's, cannot show).
    EXPECT_GE(inst->last_transaction(), t5);
  }
  EXPECT_GT(inst->new_oid(), Oid(70000));
}

// Line 33 (pack removing deleted objects comes with the pack issue).
TEST_P(ModesAndDurability, DeleteObjectNeedsTheCurrentSerial) {
  const Tid t1 = create(1, "v1");
  const Tid t2 = commit(*inst_, {{1, "v2"}}, {{1, t1}});
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  inst_->delete_object(Oid(1), t1, txn);
  try {
    inst_->tpc_vote(txn);
    FAIL() << "no ConflictError";
  } catch (const ConflictError& e) {
    EXPECT_EQ(*e.oid(), Oid(1));
    EXPECT_EQ(e.serials()->first, t2);
  }
  inst_->tpc_abort(txn);
  EXPECT_EQ(inst_->load(Oid(1)).data, "v2");
}

TEST_P(ModesAndDurability, AfterDeleteObjectLoadsRaisePOSKeyError) {
  const Tid t1 = create(1, "v1");
  create(2, "stays");
  remove(1, t1);
  auto other = reopen()->new_instance();
  EXPECT_THROW(other->load(Oid(1)), POSKeyError);
  EXPECT_EQ(other->load(Oid(2)).data, "stays");
  EXPECT_EQ(storage_->len(), 1u);
}

// Lines 33 and 35: instances that had loaded an object, in this storage and in another one
// (another process's view), learn of its deletion at their next poll — history-free
// databases remove the row, so that poll says "everything" — and then raise POSKeyError
// for it. The poll after that is an exact list again.
TEST_P(ModesAndDurability, ADeletionReachesOtherInstancesAtTheirNextPoll) {
  const Tid t1 = create(1, "v1");
  create(2, "stays");
  auto reader = storage_->new_instance();
  auto other_storage = reopen();
  auto remote = other_storage->new_instance();
  for (StorageInstance* i : {reader.get(), remote.get()}) {
    i->poll_invalidations();
    EXPECT_EQ(i->load(Oid(1)).data, "v1");
  }
  remove(1, t1);
  for (StorageInstance* i : {reader.get(), remote.get()}) {
    SCOPED_TRACE(i == reader.get() ? "same storage" : "another storage");
    const auto changed = i->poll_invalidations();
    if (changed) {
      EXPECT_NE(std::find(changed->begin(), changed->end(), Oid(1)), changed->end());
    }
    EXPECT_THROW(i->load(Oid(1)), POSKeyError);
    EXPECT_EQ(i->load(Oid(2)).data, "stays");
    const auto quiet = i->poll_invalidations();
    ASSERT_TRUE(quiet) << "every poll after a deletion says everything";
    EXPECT_TRUE(quiet->empty());
  }
}

// Line 4, and TIDs strictly increasing (design.md §2): a deletion is a finished
// transaction too. History-free, deleting the object with the newest revision removes the
// row that carried the newest TID; last_transaction must not step back to an older one,
// and the next commit's TID must follow the deletion's.
TEST_P(ModesAndDurability, ADeletionOfTheNewestObjectStaysTheLastTransaction) {
  create(1, "old");
  const Tid t2 = create(2, "newest");
  const Tid gone = remove(2, t2);
  ASSERT_GT(gone, t2);
  EXPECT_EQ(inst_->last_transaction(), gone);
  auto remote = reopen()->new_instance();
  remote->poll_invalidations();
  EXPECT_EQ(remote->last_transaction(), gone);
  EXPECT_EQ(storage_->info().last_tid, gone);
  const Tid next = commit(*remote, {{3, "after"}});
  EXPECT_GT(next, gone);
}

// Line 36.
TEST_P(ModesAndDurability, AHistoricalInstanceReadsAsOfATid) {
  const Tid t1 = create(1, "v1");
  const Tid t2 = commit(*inst_, {{1, "v2"}}, {{1, t1}});
  auto now = storage_->historical_instance(Tid(t2.value() + 1));
  EXPECT_EQ(now->load(Oid(1)).data, "v2");
  if (hp()) {
    auto then = storage_->historical_instance(t2);
    EXPECT_EQ(then->load(Oid(1)).data, "v1");
    EXPECT_EQ(then->load(Oid(1)).tid, t1);
  }
  auto before_all = storage_->historical_instance(t1);
  EXPECT_THROW(before_all->load(Oid(1)), POSKeyError);
}

// Line 36 with lines 12, 18 and 40: every read of a historical instance is as of its TID,
// not only load — later revisions and a later deletion are not in its view.
TEST_P(ModesAndDurability, AHistoricalInstanceAnswersEveryReadAsOfItsTid) {
  RELSTORE_HP_ONLY(36, "history-free storage has no revision to answer with as of an older TID");
  const Tid t1 = commit(*inst_, {{1, "one"}, {7, "seven"}});
  const Tid t2 = commit(*inst_, {{1, "two"}}, {{1, t1}});
  remove(1, t2);
  commit(*inst_, {{9, "later"}});
  auto then = storage_->historical_instance(t2);
  const auto before = then->load_before(Oid(1), Tid(~uint64_t{0}));
  ASSERT_TRUE(before);
  EXPECT_EQ(before->data, "one");
  EXPECT_EQ(before->start, t1);
  EXPECT_FALSE(before->end) << "the next revision is after the instance's TID";
  const auto h = then->history(Oid(1), 10);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].tid, t1);
  EXPECT_THROW(then->history(Oid(9), 10), POSKeyError);
  EXPECT_THROW(then->load_before(Oid(9), Tid(~uint64_t{0})), POSKeyError);
  std::vector<std::pair<uint64_t, std::string>> walked;
  for (auto r = then->record_iternext(std::nullopt); r; r = then->record_iternext(r->next)) {
    walked.emplace_back(r->oid.value(), r->data);
    if (!r->next) break;
  }
  EXPECT_EQ(walked, (std::vector<std::pair<uint64_t, std::string>>{{1, "one"}, {7, "seven"}}));
}

TEST_P(ModesAndDurability, AHistoricalInstanceIsReadOnly) {
  const Tid t1 = create(1, "v1");
  auto then = storage_->historical_instance(Tid(t1.value() + 1));
  EXPECT_TRUE(then->is_read_only());
  TransactionMetaData txn{"", "", ""};
  EXPECT_THROW(then->tpc_begin(txn), ReadOnlyError);
  EXPECT_THROW(then->new_oid(), ReadOnlyError);
}

RELSTORE_CONFORMANCE_SUITE(ModesAndDurability);

}  // namespace
}  // namespace relstore::conformance
