// Ends load snapshots off the application's thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "adapters/mysql/driver.h"

namespace relstore::mysql {

// cppconn cannot send a statement without waiting for its reply (libpq can: that is how a
// PostgreSQL snapshot ends without a round trip). So end_snapshot hands its connection to
// this thread, which sends the ROLLBACK kGrace later: the application does not wait for
// it, and the transaction ends within milliseconds, not when the application comes back.
// When the application starts its next snapshot within the grace period (back-to-back
// transactions), the queued ROLLBACK is dropped: START TRANSACTION ends the old snapshot
// in the same round trip. Without the grace period the thread and the application would
// race for the connection, and the application would often wait for a ROLLBACK reply.
class SnapshotCloser {
 public:
  static constexpr std::chrono::milliseconds kGrace{2};

  SnapshotCloser() = default;
  ~SnapshotCloser();
  SnapshotCloser(const SnapshotCloser&) = delete;
  SnapshotCloser& operator=(const SnapshotCloser&) = delete;

  // Queues a ROLLBACK of `conn`'s transaction and returns at once. The caller must not
  // touch `conn` again before take_back.
  void end_later(Connection& conn);
  // Gives `conn` back to its owner: drops its queued ROLLBACK, or waits for the one being
  // sent. Returns true when it waited for the server.
  bool take_back(Connection& conn);

 private:
  void run();

  std::mutex mu_;
  std::condition_variable wake_;  // work queued, or stopping
  std::condition_variable done_;  // a ROLLBACK was answered
  struct Entry {
    Connection* conn;
    std::chrono::steady_clock::time_point due;
  };
  std::deque<Entry> queue_;  // in order of `due`
  Connection* sending_ = nullptr;
  bool stopping_ = false;
  std::thread thread_;  // started by the first end_later
};

}  // namespace relstore::mysql
