#include "relstore/clock.h"

#include <chrono>

namespace relstore {
namespace {

class SystemClock : public Clock {
 public:
  double now() const override {
    const auto d = std::chrono::system_clock::now().time_since_epoch();
    return std::chrono::duration<double>(d).count();
  }
};

}  // namespace

std::shared_ptr<Clock> system_clock() {
  static const auto clock = std::make_shared<SystemClock>();
  return clock;
}

}  // namespace relstore
