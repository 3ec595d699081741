// Commits one object into a new SQLite database with the installed library, reads it back
// from a second instance, and prints what it read: "committed <oid> at <tid>: <state>".
#include <relstore/storage.h>

#include <cstdio>
#include <exception>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer DIR\n");
    return 2;
  }
  try {
    auto storage = relstore::open_storage(std::string("sqlite:") + argv[1]);
    auto writer = storage->new_instance();
    writer->poll_invalidations();
    const relstore::Oid oid = writer->new_oid();
    const relstore::TransactionMetaData txn{"consumer", "one object", ""};
    writer->tpc_begin(txn);
    writer->store(oid, std::nullopt, "installed library state", txn);
    writer->tpc_vote(txn);
    const relstore::Tid tid = writer->tpc_finish(txn);

    auto reader = storage->new_instance();
    reader->poll_invalidations();
    const relstore::LoadResult r = reader->load(oid);
    if (r.tid != tid) {
      std::fprintf(stderr, "read %s, committed %s\n", r.tid.hex().c_str(), tid.hex().c_str());
      return 1;
    }
    std::printf("committed %s at %s: %s\n", oid.hex().c_str(), tid.hex().c_str(), r.data.c_str());
    storage->close();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
  return 0;
}
