// A separate OS process for conformance line 39: increments the shared counter object
// (oid 1, decimal text) `commits` times with conflict retry, then prints how many
// commits succeeded and how many conflicts it retried. With `--oids N` (line 10) it asks
// for N new OIDs instead and prints them.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "relstore/errors.h"
#include "relstore/storage.h"

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[2]) == "--oids") {
    try {
      auto storage = relstore::open_storage(argv[1]);
      auto inst = storage->new_instance();
      for (int i = std::atoi(argv[3]); i > 0; --i) {
        std::printf("%llu\n", static_cast<unsigned long long>(inst->new_oid().value()));
      }
      return 0;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "counter_worker: %s\n", e.what());
      return 1;
    }
  }
  if (argc != 3) {
    std::fprintf(stderr, "usage: counter_worker URI COMMITS | counter_worker URI --oids N\n");
    return 2;
  }
  try {
    auto storage = relstore::open_storage(argv[1]);
    auto inst = storage->new_instance();
    const int commits = std::atoi(argv[2]);
    int done = 0, conflicts = 0;
    while (done < commits) {
      inst->poll_invalidations();
      const auto current = inst->load(relstore::Oid(1));
      const relstore::TransactionMetaData txn{"worker", "increment", ""};
      inst->tpc_begin(txn);
      try {
        inst->store(relstore::Oid(1), current.tid, std::to_string(std::stol(current.data) + 1),
                    txn);
        inst->tpc_vote(txn);
        inst->tpc_finish(txn);
        ++done;
      } catch (const relstore::StorageError& e) {
        inst->tpc_abort(txn);
        if (!e.retryable()) throw;
        ++conflicts;
      }
    }
    std::printf("%d %d\n", done, conflicts);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "counter_worker: %s\n", e.what());
    return 1;
  }
}
