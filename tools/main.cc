// relstore: the command line. Exit codes: 0 success, 1 runtime error, 2 usage error.
#include <cstdio>
#include <exception>
#include <string>

#include "commands.h"
#include "relstore/errors.h"
#include "relstore/uri.h"

namespace {

// CLI11 2.1 answers a mistyped command ("relstore inof", "relstore migrate stat") with only
// "A subcommand is required": name the word and the commands there are instead.
std::string unknown_command(CLI::App& app, int argc, char** argv) {
  CLI::App* level = &app;
  std::string path = "relstore";
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    const auto commands = level->get_subcommands([](CLI::App*) { return true; });
    if (commands.empty() || word.empty() || word[0] == '-') return {};
    CLI::App* next = nullptr;
    std::string names;
    for (CLI::App* c : commands) {
      if (c->get_name() == word) next = c;
      names += (names.empty() ? "" : ", ") + c->get_name();
    }
    if (!next) return path + ": unknown command '" + word + "' (commands: " + names + ")";
    level = next;
    path += " " + word;
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"relstore: ZODB storage in PostgreSQL, MySQL/MariaDB and SQLite", "relstore"};
  app.require_subcommand(1);
  // --help shows each option's default (subcommands copy this when they are made).
  app.option_defaults()->always_capture_default();
  app.set_version_flag("--version", "relstore 0.1.0");
  app.footer(
      "URIs: sqlite:///abs/dir, sqlite:rel/dir, postgresql://user:pw@host:port/db, "
      "mysql://user:pw@host:port/db, file:///path/Data.fs (options as ?key=value)");
  relstore::cli::add_info_command(app);
  relstore::cli::add_bench_command(app);
  relstore::cli::add_migrate_command(app);
  relstore::cli::add_sample_command(app);
  relstore::cli::add_convert_command(app);
  relstore::cli::add_json_mirror_command(app);
  relstore::cli::add_pack_command(app);
  relstore::cli::add_verify_command(app);
  if (const std::string unknown = unknown_command(app, argc, argv); !unknown.empty()) {
    std::fprintf(stderr, "%s\nRun with --help for more information.\n", unknown.c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const relstore::cli::Interrupted& e) {
    std::fprintf(stderr, "relstore: %s\n", relstore::redact_secrets(e.what()).c_str());
    return 130;
  } catch (const relstore::ConfigError& e) {
    std::fprintf(stderr, "relstore: %s\n", relstore::redact_secrets(e.what()).c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "relstore: %s\n", relstore::redact_secrets(e.what()).c_str());
    return 1;
  }
  return 0;
}
