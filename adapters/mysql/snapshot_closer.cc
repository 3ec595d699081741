#include "adapters/mysql/snapshot_closer.h"

#include <algorithm>

namespace relstore::mysql {

SnapshotCloser::~SnapshotCloser() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SnapshotCloser::end_later(Connection& conn) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back({&conn, std::chrono::steady_clock::now() + kGrace});
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  }
  wake_.notify_one();
}

bool SnapshotCloser::take_back(Connection& conn) {
  std::unique_lock lock(mu_);
  const auto it =
      std::find_if(queue_.begin(), queue_.end(), [&](const Entry& e) { return e.conn == &conn; });
  if (it != queue_.end()) {
    queue_.erase(it);
    return false;
  }
  if (sending_ != &conn) return false;
  done_.wait(lock, [&] { return sending_ != &conn; });
  return true;
}

void SnapshotCloser::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    if (queue_.empty()) {
      if (stopping_) return;  // every connection was taken back
      wake_.wait(lock);
      continue;
    }
    if (!stopping_ && std::chrono::steady_clock::now() < queue_.front().due) {
      wake_.wait_until(lock, queue_.front().due);
      continue;  // the entry may have been taken back meanwhile
    }
    sending_ = queue_.front().conn;
    queue_.pop_front();
    lock.unlock();
    // A failure marks the connection broken; its owner reconnects at the next snapshot.
    sending_->rollback_uncounted();
    lock.lock();
    sending_ = nullptr;
    done_.notify_all();
  }
}

}  // namespace relstore::mysql
