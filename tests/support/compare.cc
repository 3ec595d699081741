#include "support/compare.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "relstore/convert.h"
#include "relstore/errors.h"
#include "relstore/storage.h"

namespace relstore::testing {
namespace {

std::unique_ptr<Storage> open_read_only(const std::string& uri) {
  const StorageUri parsed = StorageUri::parse(uri);
  StorageOptions o = parsed.options();
  o.read_only = true;
  o.create = false;
  return open_storage(parsed, o);
}

}  // namespace

std::vector<std::string> storage_differences(const std::string& a, const std::string& b) {
  auto sa = open_read_only(a);
  auto sb = open_read_only(b);
  return compare_storages(*sa, *sb, 10);
}

Tid update_and_delete_some(const std::string& uri) {
  auto st = open_storage(uri);
  auto inst = st->new_instance();
  TransactionMetaData txn{"", "changes", ""};
  inst->tpc_begin(txn);
  for (uint64_t oid = 10; oid < 20; ++oid) {
    const auto r = inst->load(Oid(oid));
    inst->store(Oid(oid), r.tid, r.data, txn);
  }
  for (uint64_t oid = 30; oid < 35; ++oid) {
    inst->delete_object(Oid(oid), inst->load(Oid(oid)).tid, txn);
  }
  inst->tpc_vote(txn);
  return inst->tpc_finish(txn);
}

void convert_killed_when(const std::string& src, const std::string& dst,
                         const std::function<bool()>& far_enough, std::chrono::milliseconds poll,
                         std::chrono::milliseconds give_up) {
  const std::string tool = std::string(RELSTORE_BINARY_DIR) + "/tools/relstore";
  const pid_t pid = fork();
  if (pid == 0) {
    execl(tool.c_str(), tool.c_str(), "convert", "--batch", "500", src.c_str(), dst.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  for (auto waited = std::chrono::milliseconds(0); waited < give_up; waited += poll) {
    std::this_thread::sleep_for(poll);
    try {
      if (far_enough()) break;
    } catch (const StorageError&) {
      // The schema is not there yet.
    }
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
}

}  // namespace relstore::testing
