#include <algorithm>

#include "backend/registry.h"
#include "relstore/errors.h"
#include "relstore/ops.h"
#include "schema/migrations.h"

namespace relstore {
namespace {

std::unique_ptr<backend::Adapter> open_for_migrations(const std::string& uri, bool create) {
  StorageUri parsed = StorageUri::parse(uri);
  StorageOptions options = parsed.options();
  options.create = create;
  if (!create) options.read_only = true;
  return backend::open_adapter(parsed, options);
}

MigrationStatus status_of(backend::Adapter& adapter) {
  MigrationStatus st;
  st.backend = adapter.dialect();
  st.applied = adapter.applied_migrations();
  for (const Migration& m : migrations_for(adapter.dialect())) {
    st.newest = m.version;
    if (std::find(st.applied.begin(), st.applied.end(), m.version) == st.applied.end()) {
      st.pending.emplace_back(m.version, m.name);
    }
  }
  return st;
}

}  // namespace

MigrationStatus migration_status(const std::string& uri) {
  auto adapter = open_for_migrations(uri, false);
  return status_of(*adapter);
}

std::vector<std::string> migrate_up(const std::string& uri, bool dry_run) {
  // A dry run must not create a schema either.
  auto adapter = open_for_migrations(uri, !dry_run);
  const MigrationStatus st = status_of(*adapter);
  std::vector<std::string> done;
  for (const Migration& m : migrations_for(adapter->dialect())) {
    const bool pending = std::any_of(st.pending.begin(), st.pending.end(),
                                     [&](const auto& p) { return p.first == m.version; });
    if (!pending) continue;
    if (!dry_run) adapter->apply_migration(m);
    char label[16];
    std::snprintf(label, sizeof label, "%04d", m.version);
    done.push_back(std::string(label) + "_" + m.name);
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
  if (st.pending.empty()) return out + "pending        none\n";
  for (const auto& [version, name] : st.pending) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "pending        %04d_%s\n", version, name.c_str());
    out += buf;
  }
  return out;
}

}  // namespace relstore
