// Concurrency: conformance.md line 39 — threads and separate OS processes committing and
// reading at once, with no deadlock and no lost update.
#include <spawn.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <set>
#include <thread>

#include "conformance/fixture.h"

extern char** environ;

namespace relstore::conformance {
namespace {

using Concurrency = StorageTest;
constexpr int kCommitsEach = 200;

struct Tally {
  int commits = 0;
  int conflicts = 0;
};

// Increments oid 1 `n` times on its own instance, retrying conflicts; reads oid 2 as well
// so reading and writing happen at once.
Tally increment(Storage& storage, int n) {
  auto inst = storage.new_instance();
  Tally t;
  while (t.commits < n) {
    inst->poll_invalidations();
    const auto current = inst->load(Oid(1));
    EXPECT_EQ(inst->load(Oid(2)).data, "constant");
    TransactionMetaData txn{"thread", "increment", ""};
    inst->tpc_begin(txn);
    try {
      inst->store(Oid(1), current.tid, std::to_string(std::stol(current.data) + 1), txn);
      inst->tpc_vote(txn);
      inst->tpc_finish(txn);
      ++t.commits;
    } catch (const StorageError& e) {
      inst->tpc_abort(txn);
      if (!e.retryable()) throw;
      ++t.conflicts;
    }
  }
  return t;
}

void run_threads(Storage& storage, int threads) {
  std::vector<std::thread> pool;
  std::vector<Tally> tallies(static_cast<size_t>(threads));
  std::atomic<int> failures{0};
  for (int i = 0; i < threads; ++i) {
    pool.emplace_back([&, i] {
      try {
        tallies[static_cast<size_t>(i)] = increment(storage, kCommitsEach);
      } catch (const std::exception& e) {
        ++failures;
        ADD_FAILURE() << "thread " << i << ": " << e.what();
      }
    });
  }
  for (auto& t : pool) t.join();
  ASSERT_EQ(failures, 0);
  int total = 0;
  for (const auto& t : tallies) total += t.commits;
  EXPECT_EQ(total, threads * kCommitsEach);
  auto check = storage.new_instance();
  EXPECT_EQ(check->load(Oid(1)).data, std::to_string(total));
}

std::string worker_path() {
  return std::string(RELSTORE_BINARY_DIR) + "/tests/conformance/counter_worker";
}

// Starts counter_worker with `args`; its standard output is the returned stream. A failure
// to start it is a test failure (and a null stream).
std::pair<pid_t, FILE*> spawn_worker(const std::vector<std::string>& args) {
  int fds[2];
  if (pipe(fds) != 0) {
    ADD_FAILURE() << "pipe() failed";
    return {0, nullptr};
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  const std::string path = worker_path();
  std::vector<char*> argv{const_cast<char*>(path.c_str())};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, path.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    ADD_FAILURE() << "cannot start " << path;
    close(fds[0]);
    return {0, nullptr};
  }
  return {pid, fdopen(fds[0], "r")};
}

void run_processes(const std::string& uri, int processes, Storage& storage) {
  std::vector<std::pair<pid_t, FILE*>> children;
  for (int i = 0; i < processes; ++i) {
    children.push_back(spawn_worker({uri, std::to_string(kCommitsEach)}));
  }
  int total = 0;
  for (auto& [pid, out] : children) {
    if (!out) continue;  // spawn_worker has failed the test
    int done = 0, conflicts = 0;
    EXPECT_EQ(std::fscanf(out, "%d %d", &done, &conflicts), 2) << "worker printed nothing";
    fclose(out);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "worker failed";
    EXPECT_EQ(done, kCommitsEach);
    total += done;
  }
  EXPECT_EQ(total, processes * kCommitsEach);
  auto check = storage.new_instance();
  EXPECT_EQ(check->load(Oid(1)).data, std::to_string(total));
}

class ConcurrencyCounter : public Concurrency {
 protected:
  void SetUp() override {
    Concurrency::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    commit(*inst_, {{1, "0"}, {2, "constant"}});
  }
};

TEST_P(ConcurrencyCounter, TwoThreadsLoseNoUpdate) { run_threads(*storage_, 2); }
TEST_P(ConcurrencyCounter, EightThreadsLoseNoUpdate) { run_threads(*storage_, 8); }
// Two writers creating the root of an empty database at once (as two processes opening it
// with ZODB's DB() do): one creation commits and the other conflicts (line 3: storing as
// new an object that exists), never both, the second overwriting the first.
TEST_P(ConcurrencyCounter, TwoCreationsOfTheRootAtOnceDoNotBothCommit) {
  auto a = storage_->new_instance();
  auto b = storage_->new_instance();
  TransactionMetaData ta{"", "", ""}, tb{"", "", ""};
  a->tpc_begin(ta);
  a->store(Oid(0), std::nullopt, "root of a", ta);
  a->tpc_vote(ta);
  // On a Data.fs the second waits at tpc_begin (one writer at a time), elsewhere at vote.
  auto second = std::async(std::launch::async, [&] {
    b->tpc_begin(tb);
    try {
      b->store(Oid(0), std::nullopt, "root of b", tb);
      b->tpc_vote(tb);
    } catch (...) {
      b->tpc_abort(tb);
      throw;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const Tid committed = a->tpc_finish(ta);
  try {
    second.get();
    ADD_FAILURE() << "both creations of the root went through";
    b->tpc_abort(tb);
  } catch (const ConflictError& e) {
    EXPECT_EQ(*e.oid(), Oid(0));
    ASSERT_TRUE(e.serials());
    EXPECT_EQ(e.serials()->first, committed);
  }
  auto check = storage_->new_instance();
  EXPECT_EQ(check->load(Oid(0)).data, "root of a");
}

#define RELSTORE_MULTI_PROCESS_ONLY       \
  if (!context_->multi_process_writers()) \
  GTEST_SKIP() << GetParam().name << " admits one writing process at a time (its lock file)"

TEST_P(ConcurrencyCounter, TwoProcessesLoseNoUpdate) {
  RELSTORE_MULTI_PROCESS_ONLY;
  run_processes(uri_, 2, *storage_);
}
TEST_P(ConcurrencyCounter, EightProcessesLoseNoUpdate) {
  RELSTORE_MULTI_PROCESS_ONLY;
  run_processes(uri_, 8, *storage_);
}

// Line 10 across processes: OIDs handed out to processes allocating at the same time
// never repeat, and each process's increase.
TEST_P(ConcurrencyCounter, ProcessesAllocatingAtOnceGetDistinctOids) {
  RELSTORE_MULTI_PROCESS_ONLY;
  constexpr int kProcesses = 3, kEach = 300;
  std::vector<std::pair<pid_t, FILE*>> children;
  for (int i = 0; i < kProcesses; ++i) {
    children.push_back(spawn_worker({uri_, "--oids", std::to_string(kEach)}));
  }
  std::set<uint64_t> seen;
  size_t handed_out = 0;
  for (int i = 0; i < kEach; ++i) {  // this process allocates meanwhile
    seen.insert(inst_->new_oid().value());
    ++handed_out;
  }
  for (auto& [pid, out] : children) {
    if (!out) continue;  // spawn_worker has failed the test
    unsigned long long oid = 0, previous = 0;
    int count = 0;
    while (std::fscanf(out, "%llu", &oid) == 1) {
      EXPECT_GT(oid, previous) << "a process's OIDs must increase";
      previous = oid;
      seen.insert(oid);
      ++handed_out;
      ++count;
    }
    fclose(out);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "worker failed";
    EXPECT_EQ(count, kEach);
  }
  EXPECT_EQ(seen.size(), handed_out) << "an OID was handed out twice";
  EXPECT_EQ(seen.count(0), 0u);
}

RELSTORE_CONFORMANCE_SUITE(ConcurrencyCounter);

}  // namespace
}  // namespace relstore::conformance
