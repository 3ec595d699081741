#include <algorithm>
#include <optional>

#include "backend/registry.h"
#include "relstore/errors.h"
#include "relstore/ops.h"
#include "schema/migrations.h"

namespace relstore {
namespace {

// `existing`: a schema is there already. The URI's create=false keeps `up` from creating a
// database, not from upgrading one: recording a RelStorage-created schema as the baseline
// creates nothing (running the baseline's DDL again failed on its tables).
std::unique_ptr<backend::Adapter> open_for_migrations(const std::string& uri, bool create,
                                                      bool existing = false) {
  StorageUri parsed = StorageUri::parse(uri);
  if (parsed.scheme == Scheme::file) {
    throw ConfigError("relstore migrate works on databases; a Data.fs (" + parsed.redacted() +
                      ") has no schema to migrate");
  }
  StorageOptions options = parsed.options();
  options.create = create && (options.create || existing);
  if (!create) options.read_only = true;
  return backend::open_adapter(parsed, options);
}

// `applied`: the versions relstore_schema records (none for a database not made yet).
MigrationStatus status_of(const std::string& dialect, std::vector<int> applied) {
  MigrationStatus st;
  st.backend = dialect;
  st.applied = std::move(applied);
  for (const Migration& m : migrations_for(dialect)) {
    st.newest = m.version;
    if (std::find(st.applied.begin(), st.applied.end(), m.version) == st.applied.end()) {
      st.pending.emplace_back(m.version, m.name);
    }
  }
  return st;
}

std::string label(int version, const std::string& name) {
  char number[16];
  std::snprintf(number, sizeof number, "%04d", version);
  return std::string(number) + "_" + name;
}

std::vector<std::string> pending_names(const MigrationStatus& st) {
  std::vector<std::string> out;
  for (const auto& [version, name] : st.pending) out.push_back(label(version, name));
  return out;
}

}  // namespace

MigrationStatus migration_status(const std::string& uri) {
  std::unique_ptr<backend::Adapter> adapter;
  try {
    adapter = open_for_migrations(uri, false);
  } catch (const NoSchemaError&) {
    // Nothing there yet: creating the schema applies every migration.
    return status_of(scheme_name(StorageUri::parse(uri).scheme), {});
  } catch (const NewerSchemaError& e) {
    // Reported, not failed: "which version is this database at" is what status is for.
    MigrationStatus st = status_of(scheme_name(StorageUri::parse(uri).scheme), {e.version()});
    st.has_schema = true;
    return st;
  }
  MigrationStatus st = status_of(adapter->dialect(), adapter->applied_migrations());
  st.has_schema = true;
  return st;
}

std::vector<std::string> migrate_up(const std::string& uri, bool dry_run) {
  // What was pending before anything is opened for writing: opening creates a missing
  // schema (every migration), and PostgreSQL applies pending migrations itself then; the
  // report names what this call applied either way.
  const MigrationStatus before = migration_status(uri);
  if (!before.applied.empty() && before.applied.back() > before.newest) {
    throw NewerSchemaError(StorageUri::parse(uri).redacted(), before.applied.back(), before.newest);
  }
  if (dry_run) return pending_names(before);
  auto adapter = open_for_migrations(uri, true, before.has_schema);
  const MigrationStatus after = status_of(adapter->dialect(), adapter->applied_migrations());
  std::vector<std::string> done;
  for (const Migration& m : migrations_for(adapter->dialect())) {
    const auto is = [&](const MigrationStatus& st) {
      return std::any_of(st.pending.begin(), st.pending.end(),
                         [&](const auto& p) { return p.first == m.version; });
    };
    if (!is(before)) continue;  // applied already
    if (is(after)) adapter->apply_migration(m);
    // The baseline of a database RelStorage made is recorded, not run.
    const bool adopted = m.version == 1 && before.has_schema;
    done.push_back(label(m.version, m.name) +
                   (adopted ? " (recorded: the schema RelStorage created)" : ""));
  }
  return done;
}

std::string format_migration_status(const MigrationStatus& st) {
  std::string out = "backend        " + st.backend + "\n";
  out += "current        " +
         (st.applied.empty() ? std::string("none (no relstore_schema table)")
                             : std::to_string(st.applied.back())) +
         "\n";
  out += "newest         " + std::to_string(st.newest) + "\n";
  if (!st.applied.empty() && st.applied.back() > st.newest) {
    return out +
           "pending        none: the database is newer than this relstore; use the release "
           "that made it\n";
  }
  if (st.pending.empty()) return out + "pending        none\n";
  for (const auto& [version, name] : st.pending) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "pending        %04d_%s\n", version, name.c_str());
    out += buf;
  }
  return out;
}

}  // namespace relstore
