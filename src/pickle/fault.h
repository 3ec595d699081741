// The internal error the pickle code throws. It carries only a message; the walker (or the
// emitter) adds the byte offset and opcode and rethrows it as relstore::PickleError.
#pragma once

#include <exception>
#include <string>
#include <utility>

namespace relstore::pickle {

class Fault : public std::exception {
 public:
  explicit Fault(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

// Out of line and marked cold so that the checks on the hot path stay small.
[[noreturn, gnu::cold, gnu::noinline]] inline void fault(std::string message) {
  throw Fault(std::move(message));
}
[[noreturn, gnu::cold, gnu::noinline]] inline void fault(const char* message) {
  throw Fault(message);
}

}  // namespace relstore::pickle
