// Runs the built `relstore` tool for the command-line tests.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace relstore::testing {

struct CliRun {
  int code = -1;    // the exit code; -1 when the tool did not exit normally
  std::string out;  // stdout and stderr together
};

// `args` go through the shell as they are (quote URIs with '?' or '&').
inline CliRun run_relstore(const std::string& args) {
  const std::string cmd = std::string(RELSTORE_BINARY_DIR) + "/tools/relstore " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  CliRun r;
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace relstore::testing
