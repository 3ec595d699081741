// The JSON mirror's MySQL side (issue #6): round trips of a mirrored commit, what the
// server's JSON type refuses, NUL characters and the mode's lock. The behaviour every
// backend shares is tested in tests/unit/json_mirror_test.cc.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "mysql/support.h"
#include "relstore/errors.h"
#include "relstore/json_mirror.h"
#include "relstore/ops.h"
#include "relstore/storage.h"

namespace relstore::mysql::testing {
namespace {

using namespace std::chrono_literals;
class MysqlMirror : public MysqlServerTest {
 protected:
  // A new database with relstore's schema and the mirror in in-commit mode.
  std::string in_commit_database(const std::string& suffix, const std::string& query) {
    const std::string uri = fresh_database(suffix, query);
    open_storage(uri)->close();
    mirror_enable(uri, MirrorMode::in_commit);
    return uri;
  }
};

// A ZODB record (protocol 3): class pickle `cls`, then `state` (a state pickle's opcodes
// without PROTO and STOP).
Bytes record(const std::string& cls, const std::string& state) {
  return "\x80\x03"
         "c" +
         cls + "\n." + "\x80\x03" + state + ".";
}

// A state pickle's body {"a": `text`}.
std::string dict_with_text(const std::string& text) {
  using namespace std::string_literals;
  std::string out = "}X\x01\x00\x00\x00"s + "aX";
  const uint32_t n = static_cast<uint32_t>(text.size());
  for (int i = 0; i < 4; ++i) out += static_cast<char>((n >> (8 * i)) & 0xff);
  return out + text + "s";
}

// A state pickle's body: lists nested `depth` deep (MARK … EMPTY_LIST, then LIST … ).
std::string nested_lists(int depth) {
  const size_t n = static_cast<size_t>(depth - 1);
  return std::string(n, '(') + "]" + std::string(n, 'l');
}

// The rows travel with the finish call: a mirrored commit takes as many round trips as
// one without the mirror.
TEST_F(MysqlMirror, ATwentyObjectWriteKeepsItsRoundTripsWithTheMirrorOn) {
  for (const bool hp : {false, true}) {
    SCOPED_TRACE(hp ? "history-preserving" : "history-free");
    const std::string uri =
        fresh_database("jm_trips", hp ? "?history=preserving" : "?history=free");
    auto st = open_storage(uri);
    auto inst = st->new_instance();
    std::map<Oid, Bytes> states;
    for (uint64_t oid = 1; oid <= 20; ++oid) {
      states[Oid(oid)] = record("myapp\nThing", dict_with_text("first"));
    }
    Tid tid = commit_states(*inst, states);  // warms up the connections
    std::map<Oid, Tid> serials;
    for (const auto& [oid, unused] : states) serials[oid] = tid;
    auto trips = [&](const std::string& text) {
      for (auto& [oid, data] : states) data = record("myapp\nThing", dict_with_text(text));
      inst->poll_invalidations();
      const uint64_t before = st->stats().round_trips;
      tid = commit_states(*inst, states, serials);
      for (auto& [oid, serial] : serials) serial = tid;
      return st->stats().round_trips - before;
    };
    const uint64_t without = trips("off");
    mirror_enable(uri, MirrorMode::in_commit);
    trips("warm");  // the first vote after the change learns the mode
    const uint64_t with = trips(std::string(500, 'x'));
    EXPECT_EQ(with, without);
    EXPECT_LE(with, 4u);
    std::printf("[ trips    ] %s, 20-object write: %llu without the mirror, %llu with\n",
                hp ? "hp" : "hf", static_cast<unsigned long long>(without),
                static_cast<unsigned long long>(with));
    auto conn = connect(db_of(uri));
    EXPECT_EQ(
        scalar(*conn, "SELECT COUNT(*) FROM object_json WHERE tid = " + std::to_string(tid.sql()) +
                          " AND JSON_UNQUOTE(JSON_EXTRACT(state, '$.a')) LIKE 'xxx%'"),
        "20");
    EXPECT_EQ(scalar(*conn, "SELECT last_tid FROM relstore_json_mirror"),
              std::to_string(tid.sql()));
  }
}

// MySQL's JSON keeps \u0000 (PostgreSQL's jsonb does not): the text comes back as stored.
TEST_F(MysqlMirror, NulCharactersAreKept) {
  const std::string uri = in_commit_database("jm_nul", "?history=free");
  auto st = open_storage(uri);
  auto inst = st->new_instance();
  commit_states(*inst, {{Oid(1), record("myapp\nThing", dict_with_text(std::string("b\0c", 3)))}});
  auto conn = connect(db_of(uri));
  EXPECT_EQ(scalar(*conn, "SELECT HEX(JSON_UNQUOTE(JSON_EXTRACT(state, '$.a'))) FROM object_json"),
            "620063");
  EXPECT_EQ(scalar(*conn, "SELECT COUNT(*) FROM object_json_error"), "0");
}

// What the server refuses (values nested deeper than its JSON allows, a class name longer
// than the column) becomes an error entry with the server's message; the other rows of the
// commit are written, an older row of the refused object goes, and the commit succeeds.
TEST_F(MysqlMirror, RowsTheServerRefusesBecomeErrorEntries) {
  for (const bool hp : {false, true}) {
    SCOPED_TRACE(hp ? "history-preserving" : "history-free");
    const std::string uri =
        in_commit_database("jm_refused", hp ? "?history=preserving" : "?history=free");
    auto st = open_storage(uri);
    auto inst = st->new_instance();
    const Tid first =
        commit_states(*inst, {{Oid(1), record("myapp\nThing", dict_with_text("ok"))},
                              {Oid(2), record("myapp\nThing", dict_with_text("ok"))}});
    const Bytes deep = record("myapp\nDeep", nested_lists(150));
    const Tid second = commit_states(
        *inst,
        {{Oid(1), deep},
         {Oid(2), record("myapp\nThing", dict_with_text("still ok"))},
         {Oid(3), record("myapp\n" + std::string(300, 'C'), dict_with_text("long name"))}},
        {{Oid(1), first}, {Oid(2), first}});
    EXPECT_EQ(inst->load(Oid(1)).data, deep);
    auto conn = connect(db_of(uri));
    EXPECT_EQ(scalar(*conn, "SELECT GROUP_CONCAT(zoid) FROM object_json"), "2");
    EXPECT_EQ(scalar(*conn,
                     "SELECT GROUP_CONCAT(CONCAT(zoid, ':', tid = " + std::to_string(second.sql()) +
                         ") ORDER BY zoid) FROM "
                         "object_json_error"),
              "1:1,3:1");
    EXPECT_NE(scalar(*conn, "SELECT message FROM object_json_error WHERE zoid = 1")
                  .find("not accepted by the server"),
              std::string::npos);
    EXPECT_EQ(mirror_status(uri).undecodable, 2u);
    // A rebuild comes to the same entries.
    mirror_rebuild(uri);
    EXPECT_EQ(scalar(*conn, "SELECT GROUP_CONCAT(zoid ORDER BY zoid) FROM object_json_error"),
              "1,3");
  }
}

// A state whose JSON is longer than one packet (bytes become hex text, twice their size)
// cannot be written as a mirror row at all: it becomes an error entry, and neither the
// commit nor a rebuild fails on it.
TEST_F(MysqlMirror, ARowLongerThanAPacketBecomesAnErrorEntry) {
  const std::string uri = in_commit_database("jm_packet", "?history=free");
  auto conn = connect(db_of(uri));
  const size_t packet = std::stoul(scalar(*conn, "SELECT @@max_allowed_packet"));
  const std::string data(packet / 2 + 1000, '\x80');  // not UTF-8: hex in the JSON
  using namespace std::string_literals;
  std::string state = "}X\x01\x00\x00\x00"s + "aB";  // {"a": bytes}
  for (int i = 0; i < 4; ++i) state += static_cast<char>((data.size() >> (8 * i)) & 0xff);
  const Bytes big = record("myapp\nBlob", state + data + "s");
  auto st = open_storage(uri);
  auto inst = st->new_instance();
  const Tid tid =
      commit_states(*inst, {{Oid(1), big}, {Oid(2), record("myapp\nThing", dict_with_text("ok"))}});
  EXPECT_EQ(inst->load(Oid(1)).data, big);
  EXPECT_EQ(scalar(*conn, "SELECT GROUP_CONCAT(zoid) FROM object_json"), "2");
  EXPECT_EQ(scalar(*conn, "SELECT CONCAT(zoid, ':', tid = " + std::to_string(tid.sql()) +
                              ") FROM object_json_error"),
            "1:1");
  EXPECT_NE(scalar(*conn, "SELECT message FROM object_json_error").find("max_allowed_packet"),
            std::string::npos);
  EXPECT_NO_THROW(mirror_rebuild(uri));
  EXPECT_EQ(mirror_status(uri).undecodable, 1u);
  EXPECT_EQ(mirror_status(uri).pending, 0u);
}

// MySQL commits DDL statement by statement: a migration cut short between creating the
// mirror's tables and filling them is not recorded, and the mirror refuses to work on it
// (enable used to change no row and report success) until `migrate up` runs it again.
TEST_F(MysqlMirror, AMirrorMigrationCutShortIsRefusedUntilMigrateUp) {
  const std::string uri = fresh_database("jm_cut", "?history=free");
  open_storage(uri)->close();
  auto conn = connect(db_of(uri));
  conn->batch("DELETE FROM relstore_json_mirror; DELETE FROM relstore_schema WHERE version = 2", 2,
              Context::other);
  try {
    mirror_enable(uri, MirrorMode::in_commit);
    FAIL() << "enabled a mirror whose migration did not finish";
  } catch (const SchemaError& e) {
    EXPECT_NE(std::string(e.what()).find("relstore migrate up"), std::string::npos) << e.what();
  }
  EXPECT_EQ(migrate_up(uri, false), std::vector<std::string>{"0002_json_mirror"});
  mirror_enable(uri, MirrorMode::in_commit);
  EXPECT_EQ(mirror_status(uri).mode, MirrorMode::in_commit);
}

// A deadlock while the finish writes the mirror's rows is not a row the server refused:
// InnoDB has rolled the whole transaction back, so the finish must fail. Taken for a
// refusal, the procedure would carry on in a new transaction and return a TID for a commit
// whose data is gone. Here another session holds the object's mirror row and then asks for
// the commit lock the finish holds; having written more, it is not the one InnoDB rolls back.
TEST_F(MysqlMirror, ADeadlockWritingTheMirrorFailsTheCommit) {
  const std::string uri = in_commit_database("jm_deadlock", "?history=free");
  auto st = open_storage(uri);
  auto inst = st->new_instance();
  const Tid first =
      commit_states(*inst, {{Oid(1), record("myapp\nThing", dict_with_text("first"))}});

  // InnoDB spares a transaction that has changed a non-transactional table (as a commit
  // has, through its MyISAM or Aria temporary tables) unless the other has too; then it
  // rolls back the one that wrote less. So the holder writes to both kinds.
  auto holder = connect(db_of(uri));
  holder->exec("CREATE TABLE heavy (n INT PRIMARY KEY) ENGINE = InnoDB");
  holder->exec("CREATE TABLE untransacted (n INT PRIMARY KEY) ENGINE = MyISAM");
  holder->batch(
      "START TRANSACTION; "
      "INSERT INTO heavy WITH RECURSIVE s (n) AS "
      "(SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 50) "
      "SELECT a.n * 100 + b.n FROM s a, s b; "
      "INSERT INTO untransacted VALUES (1); "
      "SELECT zoid FROM object_json WHERE zoid = 1 FOR UPDATE",
      4, Context::other);
  inst->poll_invalidations();
  auto finished = std::async(std::launch::async, [&] {
    return commit_states(*inst, {{Oid(1), record("myapp\nThing", dict_with_text("second"))}},
                         {{Oid(1), first}});
  });
  // Wait until the finish holds the commit lock and waits for the mirror row (the
  // processlist shows a session's current statement inside a procedure).
  auto watcher = connect(db_of(uri));
  ASSERT_TRUE(eventually_one(*watcher,
                             "SELECT COUNT(*) FROM information_schema.PROCESSLIST "
                             "WHERE INFO LIKE 'INSERT INTO object_json %'"))
      << "the finish never reached the mirror row";
  ASSERT_EQ(finished.wait_for(0ms), std::future_status::timeout);
  holder->exec("SELECT tid FROM commit_row_lock WHERE tid = 0 FOR UPDATE");
  holder->exec("ROLLBACK");
  EXPECT_THROW(finished.get(), LockConflictError);

  auto reader = st->new_instance();
  reader->poll_invalidations();
  EXPECT_EQ(reader->load(Oid(1)).tid, first);
  auto conn = connect(db_of(uri));
  EXPECT_EQ(scalar(*conn, "SELECT tid FROM object_json WHERE zoid = 1"),
            std::to_string(first.sql()));
  EXPECT_EQ(scalar(*conn, "SELECT COUNT(*) FROM object_json_error"), "0");
}

// A follow or rebuild batch holds the commit lock while it checks that its states are still
// current. That check must not wait for the rows a voted commit holds: the commit waits for
// the commit lock, and each would wait for the other (InnoDB kills one as a deadlock).
TEST_F(MysqlMirror, AMirrorBatchDoesNotWaitForTheRowsOfAVotedCommit) {
  for (const char* mode : {"free", "preserving"}) {
    SCOPED_TRACE(mode);
    const std::string uri =
        in_commit_database(std::string("jm_batch_") + mode, std::string("?history=") + mode);
    auto st = open_storage(uri);
    auto inst = st->new_instance();
    commit_states(*inst, {{Oid(1), record("myapp\nThing", dict_with_text("first"))}});
    // What a voted commit of oid 1 holds (its vote's locking read).
    auto voted = connect(db_of(uri));
    voted->batch(std::string("START TRANSACTION; SELECT zoid FROM ") +
                     (std::string(mode) == "free" ? "object_state" : "current_object") +
                     " WHERE zoid = 1 FOR UPDATE",
                 2, Context::other);
    auto rebuilt = std::async(std::launch::async,
                              [&] { return mirror_rebuild(uri + "&commit_lock_timeout=3"); });
    const bool done = rebuilt.wait_for(2s) == std::future_status::ready;
    voted->exec("ROLLBACK");
    ASSERT_TRUE(done) << "the batch waited for the voted commit's row";
    EXPECT_EQ(rebuilt.get().decoded, 1u);
    auto conn = connect(db_of(uri));
    EXPECT_EQ(scalar(*conn, "SELECT COUNT(*) FROM object_json"), "1");
  }
}

// A change of mode waits for commits that voted under the old mode, so a commit writes its
// rows exactly when the mode it finishes under is in-commit.
TEST_F(MysqlMirror, AChangeOfModeWaitsForCommitsThatVoted) {
  const std::string uri = fresh_database("jm_mode_lock", "?history=free");
  auto st = open_storage(uri);
  auto inst = st->new_instance();
  TransactionMetaData txn{"", "", ""};
  inst->tpc_begin(txn);
  inst->store(Oid(1), std::nullopt, record("myapp\nThing", dict_with_text("voted")), txn);
  inst->tpc_vote(txn);  // mode off
  auto enabled =
      std::async(std::launch::async, [&] { return mirror_enable(uri, MirrorMode::in_commit); });
  EXPECT_EQ(enabled.wait_for(500ms), std::future_status::timeout);
  const Tid tid = inst->tpc_finish(txn);
  const MirrorProgress p = enabled.get();
  EXPECT_EQ(p.decoded, 1u) << "the catch-up after the change mirrors the commit";
  const MirrorStatus s = mirror_status(uri);
  EXPECT_EQ(s.mirrored_tid, tid);
  EXPECT_EQ(s.pending, 0u);
}

// Emptying the database waits for a follow or rebuild batch in progress, which holds the
// mirror's lock shared to its commit: one that checked its states before the zap and
// committed after it put rows of zapped objects back, rows no later batch replaced.
TEST_F(MysqlMirror, AZapWaitsForAMirrorBatchInProgress) {
  const std::string uri = in_commit_database("jm_zap_lock", "?history=free");
  auto st = open_storage(uri);
  commit_states(*st->new_instance(), {{Oid(1), record("myapp\nThing", dict_with_text("zapped"))}});
  auto batch = connect(db_of(uri));
  batch->exec("START TRANSACTION");
  batch->query_int("SELECT id FROM relstore_json_mirror_lock WHERE id = 0 LOCK IN SHARE MODE");
  auto zapped = std::async(std::launch::async, [&] { st->zap_all(); });
  EXPECT_EQ(zapped.wait_for(300ms), std::future_status::timeout);
  batch->exec("COMMIT");
  zapped.get();
  auto conn = connect(db_of(uri));
  EXPECT_EQ(scalar(*conn, "SELECT COUNT(*) FROM object_json"), "0");
  EXPECT_EQ(scalar(*conn, "SELECT COUNT(*) FROM object_state"), "0");
}

}  // namespace
}  // namespace relstore::mysql::testing
