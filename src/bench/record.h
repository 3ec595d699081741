// The records `relstore bench` writes: ZODB records like any application's (a class
// pickle, then a state pickle holding the bytes), so that a pack's garbage collection and
// the JSON mirror read bench objects as they read others, rather than stop at them.
#pragma once

#include <string>
#include <string_view>

#include "sample/pickle_writer.h"

namespace relstore::bench {

inline std::string bench_record(std::string_view payload) {
  sample::PickleWriter w;
  w.begin();
  w.global("relstore.bench", "Payload");
  w.end();
  w.begin();
  w.bytes(payload);
  w.end();
  return w.take();
}

}  // namespace relstore::bench
