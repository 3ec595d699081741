// The command line the benchmark executables share: integer options "--name N" and at
// most one positional argument, the server URI, which defaults to an environment variable.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

namespace bench {

// Fills the integers `options` names and `uri` (from `env` when the command line has none;
// no env: no URI expected). Prints `usage` and returns false for an unknown option, an
// option without its number, a second positional argument or a missing URI.
inline bool parse_args(int argc, char** argv, const std::map<std::string_view, int*>& options,
                       const char* env, std::string& uri, const char* usage) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (const auto it = options.find(arg); it != options.end() && i + 1 < argc) {
      *it->second = std::atoi(argv[++i]);
    } else if (arg.substr(0, 2) != "--" && env && uri.empty()) {
      uri = arg;
    } else {
      std::fprintf(stderr, "usage: %s\n", usage);
      return false;
    }
  }
  if (env && uri.empty()) {
    if (const char* value = std::getenv(env)) uri = value;
  }
  if (env && uri.empty()) {
    std::fprintf(stderr, "usage: %s (or set %s)\n", usage, env);
    return false;
  }
  return true;
}

}  // namespace bench
