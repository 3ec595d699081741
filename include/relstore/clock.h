// An injectable wall clock, so tests can set the time back or freeze it.
#pragma once

#include <memory>

namespace relstore {

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds since the Unix epoch, UTC, with sub-second precision.
  virtual double now() const = 0;
};

// The system's real-time clock.
std::shared_ptr<Clock> system_clock();

// A clock that returns whatever it was last set to.
class ManualClock : public Clock {
 public:
  explicit ManualClock(double t) : t_(t) {}
  double now() const override { return t_; }
  void set(double t) { t_ = t; }

 private:
  double t_;
};

}  // namespace relstore
