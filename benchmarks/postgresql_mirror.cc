// What the in-commit JSON mirror costs a PostgreSQL commit (docs/benchmarks.md): 20-object
// write transactions of real sample documents with the mirror in-commit and off, in one
// run on one database. Prints a table; not a test.
//
//   postgresql_mirror [URI] [--objects N] [--transactions T]
//
// URI defaults to $RELSTORE_TEST_POSTGRESQL_URI. The role needs CREATEDB: the benchmark
// works in databases of its own, <db>_mirror_hf and <db>_mirror_hp, which it empties.
// It writes `relstore sample` content (N objects), then times T transactions per mode,
// each rewriting the states of 20 random documents (decoded again by the mirror). Modes
// alternate in blocks of 25 transactions so that noisy neighbours slow both alike. Also
// measured: in-commit without the GIN index on state; without it and the tid index on a
// table with room on its pages (fillfactor 70), so that a rewrite can be a HOT update that
// touches no index; and both modes with synchronous_commit=off, where the WAL flush no
// longer hides the server's work. Each row also gives the WAL a commit writes (from
// pg_current_wal_insert_lsn around it, read on a connection of its own).
#include <libpq-fe.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "args.h"
#include "pg_raw.h"
#include "relstore/json_mirror.h"
#include "relstore/sample.h"
#include "relstore/storage.h"
#include "stats.h"

namespace {

using namespace bench;
using relstore::MirrorMode;

// The documents of the sample, with their states and serials.
struct Documents {
  std::vector<relstore::Oid> oids;
  std::map<relstore::Oid, std::string> states;
  std::map<relstore::Oid, relstore::Tid> serials;
};

Documents documents_of(relstore::StorageInstance& inst) {
  Documents d;
  std::optional<relstore::Oid> next;
  while (auto r = inst.record_iternext(next)) {
    if (r->data.find("myapp.content\nDocument") != std::string::npos) {
      d.oids.push_back(r->oid);
      d.states[r->oid] = r->data;
      d.serials[r->oid] = r->tid;
    }
    if (!r->next) break;
    next = r->next;
  }
  return d;
}

struct Timings {
  std::vector<double> off, on;
  double wal_off = 0, wal_on = 0;  // WAL bytes, summed over the transactions
  uint64_t round_trips_on = 0, transactions_on = 0;
};

// T transactions per mode, alternating in blocks of 25; `on` is the in-commit mode.
Timings measure(const std::string& uri, relstore::Storage& st, Documents& docs, int transactions,
                std::mt19937& rng) {
  auto inst = st.new_instance();
  Timings t;
  PGconn* wal = connect(uri);
  const auto lsn = [wal] {
    PGresult* r = PQexec(wal, "SELECT pg_current_wal_insert_lsn() - '0/0'");
    const double bytes = PQresultStatus(r) == PGRES_TUPLES_OK ? std::atof(PQgetvalue(r, 0, 0)) : 0;
    PQclear(r);
    return bytes;
  };
  for (int block = 0; block < 2 * transactions / 25; ++block) {
    const bool on = block % 2 == 0;
    if (on) {
      relstore::mirror_enable(uri, MirrorMode::in_commit);  // catches up the off block
      // The catch-up's rows sit in the GIN index's pending list, which a commit of the
      // block would otherwise merge and pay for: merged here, untimed, the block's commits
      // pay for their own rows only.
      exec(wal,
           "SELECT gin_clean_pending_list(i.indexrelid::regclass) FROM pg_index i "
           "JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam "
           "WHERE i.indrelid = 'object_json'::regclass AND a.amname = 'gin'");
    } else {
      relstore::mirror_disable(uri);
    }
    inst->poll_invalidations();
    for (int k = 0; k < 25; ++k) {
      std::vector<relstore::Oid> pick;
      while (pick.size() < 20) {
        const relstore::Oid oid = docs.oids[rng() % docs.oids.size()];
        if (std::find(pick.begin(), pick.end(), oid) == pick.end()) pick.push_back(oid);
      }
      const double wal0 = lsn();
      const uint64_t rt0 = st.stats().round_trips;
      const auto t0 = Clock::now();
      relstore::TransactionMetaData txn{"bench", "mirror", ""};
      inst->tpc_begin(txn);
      for (auto oid : pick) inst->store(oid, docs.serials[oid], docs.states[oid], txn);
      inst->tpc_vote(txn);
      const relstore::Tid tid = inst->tpc_finish(txn);
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      for (auto oid : pick) docs.serials[oid] = tid;
      (on ? t.wal_on : t.wal_off) += lsn() - wal0;
      (on ? t.on : t.off).push_back(us);
      if (on) {
        t.round_trips_on += st.stats().round_trips - rt0;
        ++t.transactions_on;
      }
    }
  }
  PQfinish(wal);
  return t;
}

void row(const char* what, const Timings& t) {
  const double off = median(t.off), on = median(t.on);
  std::printf("| %s | %.0f | %.0f | %+.1f %% | %+.1f %% | %.1f / %.1f |\n", what, off, on,
              (on / off - 1) * 100, (mean(t.on) / mean(t.off) - 1) * 100,
              t.wal_off / 1024 / static_cast<double>(std::max<size_t>(t.off.size(), 1)),
              t.wal_on / 1024 / static_cast<double>(std::max<size_t>(t.on.size(), 1)));
}

}  // namespace

int main(int argc, char** argv) {
  std::string server;
  int objects = 20000, transactions = 400;
  if (!bench::parse_args(argc, argv, {{"--objects", &objects}, {"--transactions", &transactions}},
                         "RELSTORE_TEST_POSTGRESQL_URI", server,
                         "postgresql_mirror postgresql://user:pw@host:port/db [--objects N] "
                         "[--transactions T]")) {
    return 2;
  }
  std::mt19937 rng(42);
  const std::string date = today();
  std::printf(
      "PostgreSQL, in-commit JSON mirror vs off, %d sample objects, %d transactions of "
      "20 documents per mode (%s)\n\n",
      objects, transactions, date.c_str());
  std::printf(
      "| commit of 20 documents | mirror off (µs, median) | in-commit (µs, median) | overhead "
      "(medians) | overhead (means) | WAL per commit, off / in-commit (kB) |\n");
  std::printf("|---|---:|---:|---:|---:|---:|\n");
  for (bool hp : {false, true}) {
    const std::string uri = bench_database(server, "_mirror", hp);
    relstore::SampleOptions o;
    o.objects = static_cast<uint64_t>(objects);
    relstore::write_sample(uri, o);
    relstore::mirror_enable(uri, MirrorMode::in_commit);
    PGconn* admin = connect(uri);
    exec(admin, hp ? "VACUUM ANALYZE object_state, current_object, \"transaction\", object_json"
                   : "VACUUM ANALYZE object_state, object_json");
    auto st = relstore::open_storage(uri);
    Documents docs = documents_of(*st->new_instance());
    const char* mode = hp ? "history-preserving" : "history-free";

    const Timings base = measure(uri, *st, docs, transactions, rng);
    row(mode, base);
    exec(admin, "DROP INDEX object_json_state");
    row((std::string(mode) + ", without the GIN index on state").c_str(),
        measure(uri, *st, docs, transactions, rng));
    // VACUUM FULL rewrites the table so that the fillfactor applies to every page; it
    // cannot share a message with other statements.
    exec(admin, "DROP INDEX object_json_tid; ALTER TABLE object_json SET (fillfactor = 70)");
    exec(admin, "VACUUM FULL object_json");
    row((std::string(mode) + ", without both, fillfactor 70").c_str(),
        measure(uri, *st, docs, transactions, rng));
    exec(admin, "ALTER TABLE object_json RESET (fillfactor)");
    exec(admin, "VACUUM FULL object_json");
    exec(admin,
         "CREATE INDEX object_json_tid ON object_json (tid); "
         "CREATE INDEX object_json_state ON object_json USING GIN (state jsonb_path_ops)");
    auto async = relstore::open_storage(uri + "&options=-c%20synchronous_commit%3Doff");
    row((std::string(mode) + ", synchronous_commit=off").c_str(),
        measure(uri, *async, docs, transactions, rng));
    std::printf("| %s: round trips per in-commit transaction | | %.2f | | | |\n", mode,
                static_cast<double>(base.round_trips_on) /
                    static_cast<double>(std::max<uint64_t>(base.transactions_on, 1)));
    PQfinish(admin);
  }
  return 0;
}
