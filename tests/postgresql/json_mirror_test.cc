// The JSON mirror's PostgreSQL side (issue #6): round trips of a mirrored commit, jsonb's
// refusals, NUL characters, LISTEN/NOTIFY wake-ups and the mode lock. The behaviour every
// backend shares is tested in tests/unit/json_mirror_test.cc.
#include "relstore/json_mirror.h"

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "postgresql/pg_support.h"
#include "relstore/errors.h"
#include "relstore/sample.h"
#include "relstore/storage.h"
#include "relstore/timestamp.h"

namespace relstore {
namespace {

using pgtest::TestDatabase;
using namespace std::chrono_literals;

// A ZODB record: class pickle `myapp.Thing`, state {"a": `text`} (protocol 3).
Bytes record_with_text(const std::string& text) {
  using namespace std::string_literals;
  Bytes out =
      "\x80\x03"
      "cmyapp\nThing\n."s;
  out +=
      "\x80\x03}X\x01\x00\x00\x00"
      "aX"s;
  const uint32_t n = static_cast<uint32_t>(text.size());
  for (int i = 0; i < 4; ++i) out += static_cast<char>((n >> (8 * i)) & 0xff);
  out += text + "s.";
  return out;
}

Tid commit(StorageInstance& inst, const std::map<Oid, std::optional<Tid>>& serials,
           const Bytes& data) {
  TransactionMetaData txn{"", "", ""};
  inst.tpc_begin(txn);
  for (const auto& [oid, serial] : serials) inst.store(oid, serial, data, txn);
  inst.tpc_vote(txn);
  return inst.tpc_finish(txn);
}

class PostgresqlMirror : public pgtest::ModeTest {};

// The rows travel with the finish call: a mirrored commit takes the same 3 round trips.
TEST_P(PostgresqlMirror, TwentyObjectWriteWithTheMirrorOnTakesAtMostFourRoundTrips) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db(db_name("jm_rt"));
  const std::string uri = db.uri(query());
  open_storage(uri)->close();
  mirror_enable(uri, MirrorMode::in_commit);
  auto st = open_storage(uri);
  auto inst = st->new_instance();
  std::map<Oid, std::optional<Tid>> serials;
  for (uint64_t oid = 1; oid <= 20; ++oid) serials[Oid(oid)] = std::nullopt;
  Tid tid = commit(*inst, serials, record_with_text("first"));  // warms up the connections
  for (auto& [oid, serial] : serials) serial = tid;
  const uint64_t before = st->stats().round_trips;
  tid = commit(*inst, serials, record_with_text(std::string(500, 'x')));
  const uint64_t used = st->stats().round_trips - before;
  EXPECT_LE(used, 4u);
  EXPECT_EQ(used, 2u) << "BEGIN+mode+records+lock call, finish with rows+COMMIT";
  RecordProperty("round_trips", static_cast<int>(used));
  EXPECT_EQ(db.scalar("SELECT COUNT(*) FROM object_json WHERE tid = " + std::to_string(tid.sql()) +
                      " AND state->>'a' LIKE 'xxx%'"),
            "20");
  EXPECT_EQ(db.scalar("SELECT last_tid FROM relstore_json_mirror"), std::to_string(tid.sql()));
}

// jsonb refuses \u0000; the decoder writes U+FFFD for it on PostgreSQL.
TEST_P(PostgresqlMirror, NulCharactersBecomeReplacementCharacters) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db(db_name("jm_nul"));
  const std::string uri = db.uri(query());
  open_storage(uri)->close();
  mirror_enable(uri, MirrorMode::in_commit);
  auto st = open_storage(uri);
  auto inst = st->new_instance();
  commit(*inst, {{Oid(1), std::nullopt}}, record_with_text(std::string("b\0c", 3)));
  EXPECT_EQ(db.scalar("SELECT state->>'a' FROM object_json WHERE zoid = 1"),
            "b\xef\xbf\xbd"
            "c");
  EXPECT_EQ(db.scalar("SELECT COUNT(*) FROM object_json_error"), "0");
}

// A state jsonb refuses becomes an error entry with the server's message; the other rows
// of the batch are written, and nothing fails.
TEST_P(PostgresqlMirror, StatesJsonbRefusesBecomeErrorEntries) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db(db_name("jm_refused"));
  open_storage(db.uri(query()))->close();
  db.exec(
      "SELECT relstore_json_mirror_write(false, ARRAY[7, 8]::bigint[], ARRAY[5, 5]::bigint[], "
      "ARRAY['a.B'::bytea, 'a.B'::bytea], ARRAY[''::bytea, ''::bytea], "
      "ARRAY['{\"ok\": 1}'::bytea, '{broken'::bytea], ARRAY['{}', '{7}'], '{}', '{}', '{}', "
      "'{}')");
  EXPECT_EQ(db.scalar("SELECT string_agg(zoid || ':' || (state->>'ok'), ',') FROM object_json"),
            "7:1");
  EXPECT_EQ(db.scalar("SELECT zoid || ' ' || tid FROM object_json_error"), "8 5");
  EXPECT_NE(db.scalar("SELECT message FROM object_json_error").find("not accepted by jsonb"),
            std::string::npos);
}

// The follower LISTENs: a commit wakes it long before its poll interval, and so does a
// commit that bypasses relstore (RelStorage writes object_state with its own SQL).
TEST_P(PostgresqlMirror, CommitsWakeTheFollowerAtOnce) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db(db_name("jm_notify"));
  const std::string uri = db.uri(query());
  auto st = open_storage(uri);
  auto inst = st->new_instance();
  const Tid first = commit(*inst, {{Oid(1), std::nullopt}}, record_with_text("one"));
  mirror_enable(uri, MirrorMode::follow);

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> mirrored{0};
  FollowOptions o;
  o.poll_seconds = 60;  // far longer than the test waits: only NOTIFY can wake it
  o.stop = &stop;
  o.progress = [&](const MirrorProgress& p) { mirrored = p.mirrored_tid.value(); };
  auto follower = std::async(std::launch::async, [&] { return mirror_follow(uri, o); });
  auto wait_for = [&](Tid tid) {
    for (int i = 0; i < 200 && mirrored.load() < tid.value(); ++i)
      std::this_thread::sleep_for(25ms);
    return mirrored.load() >= tid.value();
  };
  EXPECT_TRUE(wait_for(first));
  std::this_thread::sleep_for(200ms);  // the follower is listening by now

  const Tid second = commit(*inst, {{Oid(1), first}}, record_with_text("two"));
  EXPECT_TRUE(wait_for(second)) << "not woken by a relstore commit";

  // What RelStorage's move does, in its own words.
  const Tid third(second.value() + 1);
  const std::string t = std::to_string(third.sql());
  const std::string state = "'\\x" + [&] {
    std::string hex;
    for (unsigned char c : record_with_text("three")) {
      static const char* digits = "0123456789abcdef";
      hex += digits[c >> 4];
      hex += digits[c & 15];
    }
    return hex;
  }() + "'::bytea";
  if (GetParam()) {
    db.exec("BEGIN; INSERT INTO \"transaction\" (tid, username, description) VALUES (" + t +
            ", '', ''); INSERT INTO object_state (zoid, tid, prev_tid, md5, state_size, state) "
            "VALUES (1, " +
            t + ", " + std::to_string(second.sql()) + ", md5(" + state + "), 10, " + state +
            "); UPDATE current_object SET tid = " + t + " WHERE zoid = 1; COMMIT");
  } else {
    db.exec("UPDATE object_state SET tid = " + t + ", state = " + state + " WHERE zoid = 1");
  }
  EXPECT_TRUE(wait_for(third)) << "not woken by a commit made with plain SQL";
  EXPECT_EQ(db.scalar("SELECT state->>'a' FROM object_json WHERE zoid = 1"), "three");

  stop = true;
  db.exec("NOTIFY relstore_json_mirror");
  EXPECT_EQ(follower.wait_for(10s), std::future_status::ready);
}

// A commit that voted with the mirror off finishes before the mode changes: the change
// waits for it (the vote holds the mode lock), so no commit straddles the switch.
TEST_P(PostgresqlMirror, ModeChangesWaitForCommitsThatAlreadyVoted) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db(db_name("jm_modelock"));
  const std::string uri = db.uri(query());
  auto st = open_storage(uri);
  auto inst = st->new_instance();
  TransactionMetaData txn{"", "", ""};
  inst->tpc_begin(txn);
  inst->store(Oid(1), std::nullopt, record_with_text("voted before"), txn);
  inst->tpc_vote(txn);
  auto enabling =
      std::async(std::launch::async, [&] { mirror_enable(uri, MirrorMode::in_commit); });
  EXPECT_EQ(enabling.wait_for(500ms), std::future_status::timeout) << "the mode changed mid-commit";
  inst->tpc_finish(txn);
  enabling.get();
  // The enable's catch-up mirrored the commit it waited for; later commits mirror themselves.
  const MirrorStatus s = mirror_status(uri);
  EXPECT_EQ(s.rows, 1u);
  EXPECT_EQ(s.pending, 0u);
  inst->poll_invalidations();
  const Tid tid = commit(*inst, {{Oid(2), std::nullopt}}, record_with_text("after"));
  EXPECT_EQ(db.scalar("SELECT tid FROM object_json WHERE zoid = 2"), std::to_string(tid.sql()));
  EXPECT_EQ(mirror_status(uri).mirrored_tid, tid);
}

// A follower whose connections the server ends (a restart, a failover) reconnects and
// goes on instead of exiting; its progress was in the database.
TEST_P(PostgresqlMirror, AFollowerReconnectsWhenTheServerEndsItsConnections) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db(db_name("jm_reconnect"));
  const std::string uri = db.uri(query());
  auto st = open_storage(uri);
  auto inst = st->new_instance();
  mirror_enable(uri, MirrorMode::follow);
  std::atomic<bool> stop{false};
  std::atomic<int> retries{0};
  FollowOptions o;
  o.poll_seconds = 0.05;
  o.stop = &stop;
  o.on_retry = [&](const std::string&) { ++retries; };
  auto follower = std::async(std::launch::async, [&] { return mirror_follow(uri, o); });
  const auto rows_become = [&](uint64_t n) {
    for (int i = 0; i < 400 && mirror_status(uri).rows != n; ++i) std::this_thread::sleep_for(25ms);
    return mirror_status(uri).rows == n;
  };
  commit(*inst, {{Oid(1), std::nullopt}}, record_with_text("before"));
  ASSERT_TRUE(rows_become(1));
  db.exec(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = "
      "current_database() AND application_name IN ('relstore admin', 'relstore listen')");
  commit(*inst, {{Oid(2), std::nullopt}}, record_with_text("after"));
  EXPECT_TRUE(rows_become(2));
  stop = true;
  follower.get();
  EXPECT_GE(retries.load(), 1);
}

// A zap (convert --clear) while a follow batch has written its rows but not committed
// them: the zap's DELETE cannot see those rows, so it must wait for the batch. Otherwise
// they survive it, and data loaded after with older TIDs (an older backup) never replaces
// them. Here another session holds the progress row, so the batch waits with its rows
// written; the zap comes next, then the hold ends.
TEST_P(PostgresqlMirror, AZapWaitsForAFollowBatchStillInProgress) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db(db_name("jm_zap_race"));
  const std::string uri = db.uri(query());
  SampleOptions newer;
  newer.objects = 40;
  write_sample(uri, newer);
  mirror_enable(uri, MirrorMode::follow);
  auto hold = db.connect();
  hold->simple("BEGIN; SELECT * FROM relstore_json_mirror WHERE id = 0 FOR UPDATE",
               postgresql::Context::other);
  const auto waiting = [&](int n) {
    const std::string sql =
        "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND "
        "wait_event_type IN ('Lock', 'Advisory')";
    for (int i = 0; i < 400 && std::stoi(db.scalar(sql)) < n; ++i)
      std::this_thread::sleep_for(25ms);
    return std::stoi(db.scalar(sql)) >= n;
  };
  FollowOptions once;
  once.once = true;
  auto batch = std::async(std::launch::async, [&] { mirror_follow(uri, once); });
  ASSERT_TRUE(waiting(1)) << "the batch never waited for the progress row";
  auto zap = std::async(std::launch::async, [&] { open_storage(uri)->zap_all(); });
  ASSERT_TRUE(waiting(2)) << "the zap never waited";
  hold->simple("COMMIT", postgresql::Context::other);
  batch.get();
  zap.get();
  EXPECT_EQ(db.scalar("SELECT COUNT(*) FROM object_json"), "0");
  SampleOptions older;
  older.objects = 40;
  older.seed = 2;
  older.start_tid = TimeStamp::from_unix(1356998400).tid();  // 2013, before the first load
  write_sample(uri, older);
  mirror_follow(uri, once);
  const std::string rows =
      "SELECT string_agg(zoid || ':' || tid, ',' ORDER BY zoid) FROM object_json";
  const std::string followed = db.scalar(rows);
  mirror_rebuild(uri);
  EXPECT_EQ(followed, db.scalar(rows));
}

// RelStorage's zap_all empties its tables with TRUNCATE, one statement per table, and
// puts back the rows it starts from. relstore's rows must follow: a reload at older TIDs is
// then mirrored, and (history-free) not refused for a deletion record left above it.
TEST_P(PostgresqlMirror, RelStoragesZapAllResetsTheMirrorAndTheDeletionRecord) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db(db_name("jm_rs_zap"));
  const std::string uri = db.uri(query());
  SampleOptions newer;
  newer.objects = 40;
  write_sample(uri, newer);
  mirror_enable(uri, MirrorMode::in_commit);
  {
    auto st = open_storage(uri);
    auto inst = st->new_instance();
    const auto [data, serial] = inst->load(Oid(7));
    TransactionMetaData txn{"", "", ""};
    inst->tpc_begin(txn);
    inst->delete_object(Oid(7), serial, txn);
    inst->tpc_vote(txn);
    inst->tpc_finish(txn);
    // And an unfinished conversion's note, which the zap leaves nothing of either.
    ASSERT_TRUE(st->set_unfinished_conversion(
        UnfinishedConversion{"file:///x.fs", "2026-12-01T00:00:00Z"}));
  }
  const std::string tables =
      hp() ? "pack_state_tid, pack_state, pack_object, object_refs_added, object_ref, "
             "current_object, blob_chunk, object_state, \"transaction\", commit_row_lock"
           : "pack_object, object_refs_added, object_ref, blob_chunk, object_state, "
             "commit_row_lock";
  std::string zap = "BEGIN; ";
  std::string rest = tables;
  for (size_t comma; (comma = rest.find(", ")) != std::string::npos; rest.erase(0, comma + 2)) {
    zap += "TRUNCATE TABLE " + rest.substr(0, comma) + " CASCADE; ";
  }
  zap += "TRUNCATE TABLE " + rest + " CASCADE; INSERT INTO commit_row_lock (tid) VALUES (0); ";
  if (hp()) {
    zap +=
        "INSERT INTO \"transaction\" (tid, username, description) VALUES "
        "(0, 'system', 'special transaction for object creation'); ";
  }
  db.exec(zap + "ALTER SEQUENCE zoid_seq RESTART WITH 1; COMMIT");
  EXPECT_EQ(db.scalar("SELECT COUNT(*) FROM object_json"), "0");
  EXPECT_EQ(db.scalar("SELECT last_tid FROM relstore_json_mirror"), "0");
  EXPECT_EQ(db.scalar("SELECT COUNT(*) FROM relstore_conversion"), "0");

  SampleOptions older;
  older.objects = 30;
  older.seed = 2;
  older.start_tid = TimeStamp::from_unix(1356998400).tid();  // 2013, before the first load
  write_sample(uri, older);
  FollowOptions once;
  once.once = true;
  mirror_follow(uri, once);
  const MirrorStatus status = mirror_status(uri);
  EXPECT_EQ(status.pending, 0u);
  EXPECT_EQ(status.mirrored_tid, status.database_tid);
  const std::string rows =
      "SELECT string_agg(zoid || ':' || tid, ',' ORDER BY zoid) FROM object_json";
  const std::string followed = db.scalar(rows);
  mirror_rebuild(uri);
  EXPECT_EQ(followed, db.scalar(rows));
  EXPECT_EQ(db.scalar("SELECT COUNT(*) FROM object_json"),
            db.scalar(hp() ? "SELECT COUNT(*) FROM current_object"
                           : "SELECT COUNT(*) FROM object_state"));
}

INSTANTIATE_TEST_SUITE_P(Modes, PostgresqlMirror, ::testing::Bool(), pgtest::mode_name);

// With a schema per tenant, emptying one tenant's object_state resets that tenant's
// mirror, whatever the search_path of the session that empties it: the trigger's unqualified
// names reached the mirror of the session's first schema instead.
TEST(PostgresqlMirrorSchema, EmptyingATenantsObjectsResetsThatTenantsMirrorOnly) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("jm_tenant_truncate");
  db.exec("CREATE SCHEMA tenant");
  const std::string tenant = db.uri("history=free&options=-csearch_path%3Dtenant,public");
  SampleOptions sample;
  sample.objects = 20;
  for (const std::string& uri : {db.uri("history=free"), tenant}) {
    write_sample(uri, sample);
    mirror_rebuild(uri);
  }
  const std::string mirrored = db.scalar("SELECT COUNT(*) FROM public.object_json");
  ASSERT_NE(mirrored, "0");
  ASSERT_EQ(db.scalar("SELECT COUNT(*) FROM tenant.object_json"), mirrored);
  db.exec("SET search_path = public; TRUNCATE tenant.object_state CASCADE");
  EXPECT_EQ(db.scalar("SELECT COUNT(*) FROM tenant.object_json"), "0");
  EXPECT_EQ(db.scalar("SELECT last_tid FROM tenant.relstore_json_mirror"), "0");
  EXPECT_EQ(db.scalar("SELECT COUNT(*) FROM public.object_json"), mirrored);
  EXPECT_NE(db.scalar("SELECT last_tid FROM public.relstore_json_mirror"), "0");
  EXPECT_LT(std::stoll(db.scalar("SELECT tid FROM tenant.relstore_hf_deletion")), 0);
  EXPECT_GE(std::stoll(db.scalar("SELECT tid FROM public.relstore_hf_deletion")), 0);
}

TEST(PostgresqlMirrorSchema, StatusWithoutTheMirrorTablesSaysWhatToDo) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("jm_notables");
  open_storage(db.uri())->close();
  db.exec(
      "DROP VIEW newt; DROP TABLE object_json, object_json_error; "
      "DROP TABLE relstore_json_mirror CASCADE");
  try {
    mirror_status(db.uri());
    FAIL() << "status without tables";
  } catch (const SchemaError& e) {
    EXPECT_NE(std::string(e.what()).find("relstore migrate up"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace relstore
