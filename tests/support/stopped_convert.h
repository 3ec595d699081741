// A conversion stopped (as Ctrl-C stops it) while it waits for another load into its
// destination, for the bulk-load tests of the server backends.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>

#include "relstore/convert.h"

namespace relstore::testing {

// Starts converting `src` into `dst`, whose bulk-load lock the caller holds; checks that
// the run waits, stops it after half a second, and checks that it ends within a minute
// having copied nothing. A caller's lock timeout of minutes makes a stop that is not seen
// a failure rather than a wait that ends by itself.
inline void expect_a_stop_ends_the_wait(const std::string& src, const std::string& dst) {
  using namespace std::chrono_literals;
  std::atomic<bool> stop{false};
  auto waiting = std::async(std::launch::async, [&] {
    ConvertOptions o;
    o.source = src;
    o.destination = dst;
    o.stop = &stop;
    return convert(o);
  });
  EXPECT_EQ(waiting.wait_for(500ms), std::future_status::timeout) << "it did not wait";
  stop = true;
  EXPECT_EQ(waiting.wait_for(60s), std::future_status::ready) << "the stop was not seen";
  const ConvertReport r = waiting.get();
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.done.transactions, 0u);
}

}  // namespace relstore::testing
