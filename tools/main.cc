// relstore: the command line. Exit codes: 0 success, 1 runtime error, 2 usage error.
#include <cstdio>
#include <exception>

#include "commands.h"
#include "relstore/errors.h"
#include "relstore/uri.h"

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
