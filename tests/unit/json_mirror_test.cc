// The JSON mirror on every backend with one (issue #6): in-commit and follow modes stay
// equal to a fresh rebuild after random commits, updates and deletes; follow resumes;
// undecodable records never fail a commit. Runs on SQLite, and on PostgreSQL when the
// environment names a server.
#include "relstore/json_mirror.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "backend/registry.h"
#include "json_mirror_support.h"
#include "mirror/rows.h"
#include "relstore/errors.h"
#include "relstore/ops.h"
#include "relstore/pickle.h"
#include "relstore/sample.h"
#include "relstore/storage.h"
#include "relstore/timestamp.h"
#include "support/temp_dir.h"

namespace relstore {
namespace {

using mirror_test::Backend;
using testing::TempDir;

struct MirrorRowText {
  std::string zoid, tid, class_name, state, refs;
  bool operator==(const MirrorRowText&) const = default;
};

// The mirror's rows (or its error entries) as text, in zoid order. PostgreSQL shows jsonb
// and arrays in their normalized text form, so equal content compares equal.
std::vector<MirrorRowText> rows_of(const std::string& uri, const char* table = "object_json") {
  const bool pg = StorageUri::parse(uri).scheme == Scheme::postgresql;
  const std::string sql =
      std::string(table) == "object_json"
          ? (pg ? "SELECT zoid, tid, class_name, state::text, refs::text FROM object_json "
                  "ORDER BY zoid"
                : "SELECT zoid, tid, class_name, state, refs FROM object_json ORDER BY zoid")
          : "SELECT zoid, tid, '', message, '' FROM object_json_error ORDER BY zoid";
  std::vector<MirrorRowText> out;
  for (const auto& r : mirror_test::query(uri, sql)) out.push_back({r[0], r[1], r[2], r[3], r[4]});
  return out;
}

class JsonMirror : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    RELSTORE_NEED_BACKEND(GetParam());
    uri_ = mirror_test::sample_database(GetParam(), d_, 400, 3);
  }

  // Random work through an instance: updates that copy other objects' states, new objects,
  // deletions, one undecodable state and, history-preserving, undos of the newest
  // transaction (which bring back deleted objects and remove created ones).
  void random_work(Storage& st, int transactions) {
    auto inst = st.new_instance();
    std::mt19937 rng(11);
    for (int t = 0; t < transactions; ++t) {
      inst->poll_invalidations();
      TransactionMetaData txn{"tester", "random " + std::to_string(t), ""};
      if (st.keep_history() && t % 7 == 6) {
        inst->tpc_begin(txn);
        inst->undo(inst->undo_log(0, 1).at(0).id, txn);
        inst->tpc_vote(txn);
        inst->tpc_finish(txn);
        continue;
      }
      std::vector<std::pair<Oid, Tid>> touched;
      std::map<Oid, std::optional<Bytes>> writes;
      for (int k = 0; k < 5; ++k) {
        const Oid target(1 + rng() % 500);
        const Oid donor(rng() % 400);
        Bytes state;
        try {
          state = inst->load(donor).data;
        } catch (const POSKeyError&) {
          continue;
        }
        const int what = static_cast<int>(rng() % 10);
        if (what == 0) state = "this is not a pickle";  // undecodable
        std::optional<Bytes> value = what == 1 ? std::nullopt : std::optional(state);
        writes[target] = value;
      }
      inst->tpc_begin(txn);
      bool ok = true;
      for (const auto& [oid, value] : writes) {
        std::optional<Tid> serial;
        try {
          serial = inst->load(oid).tid;
        } catch (const POSKeyError&) {
        }
        if (!value) {
          if (serial) inst->delete_object(oid, *serial, txn);
        } else {
          inst->store(oid, serial, *value, txn);
        }
      }
      try {
        inst->tpc_vote(txn);
        inst->tpc_finish(txn);
      } catch (const ConflictError&) {
        inst->tpc_abort(txn);
        ok = false;
      }
      (void)ok;
    }
  }

  // Nothing pending, the progress at the newest TID, and the rows a rebuild writes.
  void expect_complete_and_equal_to_a_rebuild() {
    const MirrorStatus s = mirror_status(uri_);
    EXPECT_EQ(s.pending, 0u);
    EXPECT_EQ(s.mirrored_tid, s.database_tid);
    const auto rows = rows_of(uri_);
    const auto errors = rows_of(uri_, "object_json_error");
    mirror_rebuild(uri_);
    EXPECT_EQ(rows_of(uri_), rows);
    EXPECT_EQ(rows_of(uri_, "object_json_error"), errors);
  }

  // The database's adapter, to play a mirror writer step by step.
  std::unique_ptr<backend::Adapter> adapter() const {
    StorageOptions options = StorageUri::parse(uri_).options();
    options.create = false;
    return backend::open_adapter(StorageUri::parse(uri_), options);
  }
  // What a follower would write for `changes`.
  static mirror::Batch decoded(backend::Adapter& db, const backend::MirrorChanges& changes) {
    RecordDecoder decoder;
    mirror::Batch work;
    for (const auto& [oid, row] : changes.states) {
      mirror::add_state(oid, row.tid, row.state, decoder, db.mirror_decode_options(), work);
    }
    return work;
  }

  TempDir d_;
  std::string uri_;
};

TEST_P(JsonMirror, InCommitMirrorEqualsARebuildAfterRandomWork) {
  mirror_enable(uri_, MirrorMode::in_commit);
  {
    auto st = open_storage(uri_);
    random_work(*st, 60);
  }
  const auto live = rows_of(uri_);
  const auto live_errors = rows_of(uri_, "object_json_error");
  const MirrorStatus status = mirror_status(uri_);
  EXPECT_EQ(status.mode, MirrorMode::in_commit);
  EXPECT_EQ(status.pending, 0u);
  EXPECT_EQ(status.mirrored_tid, status.database_tid);
  EXPECT_GT(status.undecodable, 0u);
  EXPECT_EQ(status.rows + status.undecodable, open_storage(uri_)->len());
  mirror_rebuild(uri_);
  EXPECT_EQ(rows_of(uri_), live);
  EXPECT_EQ(rows_of(uri_, "object_json_error"), live_errors);
}

TEST_P(JsonMirror, FollowModeCatchesUpToARebuild) {
  mirror_enable(uri_, MirrorMode::follow);
  FollowOptions once;
  once.once = true;
  mirror_follow(uri_, once);
  {
    auto st = open_storage(uri_);
    random_work(*st, 60);
  }
  EXPECT_GT(mirror_status(uri_).pending, 0u);
  mirror_follow(uri_, once);
  const auto followed = rows_of(uri_);
  const auto followed_errors = rows_of(uri_, "object_json_error");
  EXPECT_EQ(mirror_status(uri_).pending, 0u);
  mirror_rebuild(uri_);
  EXPECT_EQ(rows_of(uri_), followed);
  EXPECT_EQ(rows_of(uri_, "object_json_error"), followed_errors);
}

// Commits that find states newer than the mirror's progress which the mirror never saw
// (written while the mode was not in-commit) leave the progress where it is, so that a
// catch-up still finds them; status does not call the mirror complete.
TEST_P(JsonMirror, InCommitRowsDoNotHideStatesTheMirrorNeverSaw) {
  // The mode switched without the catch-up `enable` runs: the sample is unmirrored.
  mirror_test::query(uri_, "UPDATE relstore_json_mirror SET mode = 'in-commit' WHERE id = 0");
  {
    auto st = open_storage(uri_);
    random_work(*st, 3);
  }
  MirrorStatus s = mirror_status(uri_);
  EXPECT_TRUE(s.mirrored_tid.is_zero());
  EXPECT_GT(s.pending, 0u);
  FollowOptions once;
  once.once = true;
  mirror_follow(uri_, once);
  expect_complete_and_equal_to_a_rebuild();
}

// A follow batch that read the progress before a rebuild (or zap) reset it does not move
// it afterwards: the rebuild would otherwise skip everything up to the batch's end.
TEST_P(JsonMirror, ABatchStartedBeforeARebuildDoesNotMoveItsProgress) {
  mirror_enable(uri_, MirrorMode::follow);
  FollowOptions once;
  once.once = true;
  mirror_follow(uri_, once);
  {
    auto st = open_storage(uri_);
    random_work(*st, 10);
  }
  auto db = adapter();
  const Tid last = db->mirror_state().last_tid;
  const backend::MirrorChanges changes = db->mirror_changes(last, 100000);
  ASSERT_FALSE(changes.states.empty());
  const mirror::Batch work = decoded(*db, changes);
  db->mirror_clear();  // a rebuild starts here
  db->mirror_apply(work, mirror::Advance{last, changes.database_tid});
  EXPECT_TRUE(db->mirror_state().last_tid.is_zero());
  mirror_follow(uri_, once);  // the rebuild goes on
  const auto rebuilt_by_follow = rows_of(uri_);
  mirror_rebuild(uri_);
  EXPECT_EQ(rows_of(uri_), rebuilt_by_follow);
}

// An empty transaction in in-commit mode leaves the mirror caught up: in a history-preserving
// database it is the newest transaction, and the progress follows it as it follows any
// commit (MySQL's vote learns the mode from the rows of the objects written, of which an
// empty commit has none).
TEST_P(JsonMirror, AnEmptyCommitLeavesTheMirrorCaughtUp) {
  mirror_enable(uri_, MirrorMode::in_commit);
  auto st = open_storage(uri_);
  auto inst = st->new_instance();
  TransactionMetaData txn{"", "empty", ""};
  inst->tpc_begin(txn);
  inst->tpc_vote(txn);
  inst->tpc_finish(txn);
  const MirrorStatus s = mirror_status(uri_);
  EXPECT_EQ(s.pending, 0u);
  if (GetParam().keep_history) {
    EXPECT_EQ(s.mirrored_tid, s.database_tid);
  } else {
    // History-free keeps no row of an empty transaction; its TID may still be the progress.
    EXPECT_GE(s.mirrored_tid, s.database_tid);
  }
}

// A restore with a TID below the newest one is refused (TIDs must increase, conformance.md
// lines 2 and 13), at vote: the mirror keeps the newer row, and equals a rebuild.
TEST_P(JsonMirror, ARestoreAtAnOlderTidIsRefusedAndLeavesTheMirrorAsItWas) {
  mirror_enable(uri_, MirrorMode::in_commit);
  auto st = open_storage(uri_);
  auto inst = st->new_instance();
  inst->poll_invalidations();
  const LoadResult old = inst->load(Oid(1));
  const Bytes other = inst->load(Oid(2)).data;
  TransactionMetaData update{"", "", ""};
  inst->tpc_begin(update);
  inst->store(Oid(1), old.tid, other, update);
  inst->tpc_vote(update);
  const Tid newer = inst->tpc_finish(update);
  ASSERT_GT(newer.value(), old.tid.value() + 1);
  const Tid between(newer.value() - 1);
  TransactionMetaData restore{"", "restore", ""};
  inst->tpc_begin(restore, between);
  inst->restore(Oid(1), between, old.data, restore);
  EXPECT_THROW(inst->tpc_vote(restore), StorageTransactionError);
  inst->tpc_abort(restore);
  const auto row = mirror_test::query(uri_, "SELECT tid FROM object_json WHERE zoid = 1");
  ASSERT_EQ(row.size(), 1u);
  EXPECT_EQ(row[0][0], std::to_string(newer.sql()));
  EXPECT_EQ(mirror_status(uri_).pending, 0u);
  const auto rows = rows_of(uri_);
  mirror_rebuild(uri_);
  EXPECT_EQ(rows_of(uri_), rows);
}

// A batch read from an empty mirror (progress 0) before a zap cannot tell the zap's reset
// from its own start. Applied after it, it must not move the progress past the data the
// database holds now, or data loaded later with older TIDs would never be mirrored.
TEST_P(JsonMirror, ABatchReadBeforeAZapDoesNotClaimTheDataLoadedAfter) {
  {
    auto st = open_storage(uri_);
    random_work(*st, 10);
  }
  mirror_enable(uri_, MirrorMode::follow);
  mirror_rebuild(uri_);
  auto db = adapter();
  db->mirror_clear();  // the rebuild of the moment: progress 0
  const backend::MirrorChanges changes = db->mirror_changes(Tid(0), 100000);
  ASSERT_FALSE(changes.states.empty());
  const mirror::Batch work = decoded(*db, changes);
  open_storage(uri_)->zap_all();
  db->mirror_apply(work, mirror::Advance{Tid(0), changes.database_tid});
  EXPECT_TRUE(db->mirror_state().last_tid.is_zero())
      << "the progress claims TIDs the database no longer holds";
  EXPECT_EQ(mirror_status(uri_).rows, 0u);
}

// A commit that lands between a catch-up's last read and its write mirrors itself, but
// the in-commit rule then keeps the progress below it for good; enable ends by settling
// the progress at the newest TID under the commit lock once everything is mirrored.
TEST_P(JsonMirror, SettlingMovesTheProgressPastCommitsThatMirroredThemselves) {
  mirror_test::query(uri_, "UPDATE relstore_json_mirror SET mode = 'in-commit' WHERE id = 0");
  auto db = adapter();
  const Tid last = db->mirror_state().last_tid;
  const backend::MirrorChanges changes = db->mirror_changes(last, 100000);
  const mirror::Batch work = decoded(*db, changes);
  auto st = open_storage(uri_);
  random_work(*st, 2);  // in-commit: these commits write their own rows
  db->mirror_apply(work, mirror::Advance{last, changes.database_tid});
  random_work(*st, 2);
  EXPECT_GT(mirror_status(uri_).pending, 0u) << "the progress stays below the first commits";
  db->mirror_settle();
  expect_complete_and_equal_to_a_rebuild();
}

// A rebuild while in-commit commits run: a commit landing between its read and its write
// mirrors itself, and the rebuild must then settle the progress past it (as enable does),
// or no later commit could move it and status would report a growing lag for good.
TEST_P(JsonMirror, ARebuildDuringInCommitCommitsLeavesNothingPending) {
  mirror_enable(uri_, MirrorMode::in_commit);
  auto st = open_storage(uri_);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    while (!stop.load()) random_work(*st, 1);
  });
  for (int i = 0; i < 20; ++i) mirror_rebuild(uri_);
  stop = true;
  writer.join();
  random_work(*st, 1);  // a commit after: it must be able to move the progress
  expect_complete_and_equal_to_a_rebuild();
}

// The error entry of an undecodable object goes with the object.
TEST_P(JsonMirror, AnUndecodableObjectsEntryGoesWhenTheObjectIsDeleted) {
  mirror_enable(uri_, MirrorMode::follow);
  auto st = open_storage(uri_);
  auto inst = st->new_instance();
  inst->poll_invalidations();
  const Tid serial = inst->load(Oid(5)).tid;
  TransactionMetaData txn{"", "", ""};
  inst->tpc_begin(txn);
  inst->store(Oid(5), serial, "this is not a pickle", txn);
  inst->tpc_vote(txn);
  const Tid broken = inst->tpc_finish(txn);
  FollowOptions once;
  once.once = true;
  mirror_follow(uri_, once);
  EXPECT_EQ(mirror_status(uri_).undecodable, 1u);
  inst->tpc_begin(txn);
  inst->delete_object(Oid(5), broken, txn);
  inst->tpc_vote(txn);
  inst->tpc_finish(txn);
  mirror_follow(uri_, once);
  EXPECT_EQ(mirror_status(uri_).undecodable, 0u);
  EXPECT_TRUE(rows_of(uri_, "object_json_error").empty());
}

// Another writer's deletion that no TID shows (RelStorage's history-free deleteObject,
// a pack's garbage collection removing an object's current row) leaves a row no commit of
// the mirror's removes: status counts it, so that it does not look complete, and the
// next follow sweep removes it.
TEST_P(JsonMirror, StatusCountsRowsOfObjectsDeletedBehindTheMirror) {
  mirror_enable(uri_, MirrorMode::in_commit);
  ASSERT_EQ(mirror_status(uri_).orphaned, 0u);
  mirror_test::query(uri_, GetParam().keep_history ? "DELETE FROM current_object WHERE zoid = 5"
                                                   : "DELETE FROM object_state WHERE zoid = 5");
  const MirrorStatus s = mirror_status(uri_);
  EXPECT_EQ(s.orphaned, 1u);
  EXPECT_EQ(s.pending, 0u);
  EXPECT_NE(format_mirror_status(s, false).find("orphaned      1 rows of deleted objects"),
            std::string::npos)
      << format_mirror_status(s, false);
  EXPECT_EQ(nlohmann::json::parse(format_mirror_status(s, true))["orphaned"], 1);
  FollowOptions once;
  once.once = true;
  mirror_follow(uri_, once);
  EXPECT_EQ(mirror_status(uri_).orphaned, 0u);
  expect_complete_and_equal_to_a_rebuild();
}

// RelStorage's zap_all empties its tables with DELETE on MySQL and SQLite (its slow zap on
// PostgreSQL too) and leaves relstore's alone. A follower that finds the database empty
// with the mirror's progress past zero starts the mirror over, so that a reload at older
// TIDs is mirrored: it used to keep the old rows and skip the reload for good.
TEST_P(JsonMirror, AFollowerStartsOverWhenOtherSoftwareEmptiedTheDatabase) {
  mirror_enable(uri_, MirrorMode::follow);
  FollowOptions once;
  once.once = true;
  mirror_follow(uri_, once);
  ASSERT_GT(mirror_status(uri_).rows, 0u);
  const bool mysql = GetParam().scheme == Scheme::mysql;
  std::vector<std::string> zap = {"DELETE FROM object_state"};
  if (GetParam().keep_history) {
    zap = {"DELETE FROM current_object", "DELETE FROM object_state",
           mysql ? "DELETE FROM `transaction` WHERE tid > 0"
                 : "DELETE FROM \"transaction\" WHERE tid > 0"};
  }
  for (const auto& sql : zap) mirror_test::query(uri_, sql);
  mirror_follow(uri_, once);
  MirrorStatus s = mirror_status(uri_);
  EXPECT_EQ(s.rows, 0u);
  EXPECT_TRUE(s.mirrored_tid.is_zero());
  SampleOptions older;
  older.objects = 50;
  older.seed = 9;
  older.start_tid = TimeStamp::from_unix(1356998400).tid();  // 2013, before the first load
  write_sample(uri_, older);
  mirror_follow(uri_, once);
  expect_complete_and_equal_to_a_rebuild();
  EXPECT_GT(mirror_status(uri_).rows, 0u);
}

TEST_P(JsonMirror, AFollowerStoppedMidwayResumesWhereItStopped) {
  mirror_enable(uri_, MirrorMode::follow);
  std::atomic<bool> stop{false};
  FollowOptions first;
  first.batch = 50;
  first.stop = &stop;
  first.poll_seconds = 0.01;
  first.progress = [&](const MirrorProgress&) { stop = true; };  // stop after one batch
  mirror_follow(uri_, first);
  const MirrorStatus partial = mirror_status(uri_);
  EXPECT_GT(partial.rows, 0u);
  EXPECT_GT(partial.pending, 0u);
  EXPECT_LT(partial.mirrored_tid, partial.database_tid);

  FollowOptions rest;
  rest.once = true;
  const MirrorProgress p = mirror_follow(uri_, rest);
  EXPECT_GT(p.decoded, 0u);
  const auto resumed = rows_of(uri_);
  mirror_rebuild(uri_);
  EXPECT_EQ(rows_of(uri_), resumed);
}

TEST_P(JsonMirror, AnUndecodableRecordNeverFailsACommit) {
  mirror_enable(uri_, MirrorMode::in_commit);
  auto st = open_storage(uri_);
  auto inst = st->new_instance();
  const Oid oid = inst->new_oid();
  TransactionMetaData txn{"", "", ""};
  inst->tpc_begin(txn);
  inst->store(oid, std::nullopt, "\x80\x03garbage", txn);
  inst->tpc_vote(txn);
  const Tid tid = inst->tpc_finish(txn);
  EXPECT_EQ(inst->load(oid).data, "\x80\x03garbage");
  const auto errors = rows_of(uri_, "object_json_error");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].zoid, std::to_string(oid.sql()));
  EXPECT_EQ(mirror_status(uri_).undecodable, 1u);
  // A decodable state for the same object replaces the error with a row.
  const Bytes good = inst->load(Oid(3)).data;
  TransactionMetaData fix{"", "", ""};
  inst->tpc_begin(fix);
  inst->store(oid, tid, good, fix);
  inst->tpc_vote(fix);
  inst->tpc_finish(fix);
  EXPECT_TRUE(rows_of(uri_, "object_json_error").empty());
  EXPECT_EQ(mirror_status(uri_).undecodable, 0u);
}

TEST_P(JsonMirror, DisabledMirrorIsNotWrittenAndShowsLag) {
  mirror_enable(uri_, MirrorMode::in_commit);
  mirror_disable(uri_);
  {
    auto st = open_storage(uri_);
    random_work(*st, 5);
  }
  const MirrorStatus s = mirror_status(uri_);
  EXPECT_EQ(s.mode, MirrorMode::off);
  EXPECT_GT(s.pending, 0u);
  EXPECT_LT(s.mirrored_tid, s.database_tid);
  EXPECT_NE(format_mirror_status(s, false).find("objects pending"), std::string::npos);
}

// A mirror switched on but never caught up has no TID to measure its lag from: status must
// not report it as up to date (lag 0), in either form, while every object is pending.
TEST_P(JsonMirror, AMirrorNeverCaughtUpHasNoLagFigure) {
  mirror_enable(uri_, MirrorMode::follow);
  MirrorStatus s = mirror_status(uri_);
  EXPECT_TRUE(s.mirrored_tid.is_zero());
  EXPECT_GT(s.pending, 0u);
  EXPECT_FALSE(s.lag_seconds.has_value());
  EXPECT_NE(format_mirror_status(s, false).find("lag           all of it (nothing mirrored yet)"),
            std::string::npos)
      << format_mirror_status(s, false);
  EXPECT_TRUE(nlohmann::json::parse(format_mirror_status(s, true))["lag_seconds"].is_null());

  FollowOptions once;
  once.once = true;
  mirror_follow(uri_, once);
  s = mirror_status(uri_);
  EXPECT_EQ(s.pending, 0u);
  ASSERT_TRUE(s.lag_seconds.has_value());
  EXPECT_EQ(*s.lag_seconds, 0.0);
  EXPECT_EQ(nlohmann::json::parse(format_mirror_status(s, true))["lag_seconds"], 0.0);
}

// Deleting every object (convert --clear does) empties the mirror and its progress: the
// objects restored afterwards may carry TIDs below the one the mirror had reached, and a
// follower kept at that TID would never see them.
TEST_P(JsonMirror, ZapAllEmptiesTheMirrorAndItsProgress) {
  mirror_enable(uri_, MirrorMode::follow);
  FollowOptions once;
  once.once = true;
  mirror_follow(uri_, once);
  ASSERT_GT(mirror_status(uri_).rows, 0u);
  open_storage(uri_)->zap_all();
  const MirrorStatus s = mirror_status(uri_);
  EXPECT_EQ(s.rows, 0u);
  EXPECT_EQ(s.mirrored_tid, Tid(0));
  EXPECT_EQ(s.mode, MirrorMode::follow);
}

TEST(JsonMirrorSqlite, StatusBeforeMigrationSaysWhatToDo) {
  // A database created before migration 0002 existed has no mirror tables.
  TempDir other;
  EXPECT_THROW(mirror_status("sqlite://" + other.sub("none")), StorageError);
}

// A batch is bounded by the bytes of its states as well as by their count, in whole
// transactions: 12 transactions of 4 MiB each, read 5000 states at a time, are written in
// batches of about 16 MiB (a batch is written under the commit lock in in-commit mode).
TEST(JsonMirrorSqlite, BatchesOfLargeStatesAreBoundedByTheirBytes) {
  TempDir d;
  const std::string uri = "sqlite://" + d.sub("big") + "?history=free";
  {
    auto st = open_storage(uri);
    auto inst = st->new_instance();
    const Bytes big(4 << 20, 'x');
    for (int t = 0; t < 12; ++t) {
      TransactionMetaData txn{"", "", ""};
      inst->tpc_begin(txn);
      inst->store(Oid(1 + t), std::nullopt, big, txn);
      inst->tpc_vote(txn);
      inst->tpc_finish(txn);
    }
  }
  mirror_enable(uri, MirrorMode::follow);
  FollowOptions once;
  once.once = true;
  int batches = 0;
  once.progress = [&](const MirrorProgress&) { ++batches; };
  const MirrorProgress p = mirror_follow(uri, once);
  EXPECT_EQ(p.undecodable, 12u);
  EXPECT_GE(batches, 3);
  EXPECT_LE(batches, 6);
  const MirrorStatus s = mirror_status(uri);
  EXPECT_EQ(s.undecodable, 12u);
  EXPECT_EQ(s.pending, 0u);
}

INSTANTIATE_TEST_SUITE_P(Backends, JsonMirror, ::testing::ValuesIn(mirror_test::backends()),
                         [](const auto& p) { return mirror_test::backend_name(p.param); });

}  // namespace
}  // namespace relstore
