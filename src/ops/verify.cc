// `relstore verify`: reads every current object, in one snapshot, and checks the
// references between them; in a database also the current_object pointers (history-
// preserving) and the JSON mirror.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_set>

#include "backend/registry.h"
#include "ops/open_read_only.h"
#include "relstore/errors.h"
#include "relstore/ops.h"
#include "relstore/pickle.h"
#include "storage/object_graph.h"

namespace relstore {
namespace {

// The checks of what a database keeps beside the objects: each in a snapshot of its own.
void check_database(const std::string& uri, VerifyReport& report) {
  const StorageUri parsed = StorageUri::parse(uri);
  if (parsed.scheme == Scheme::file) {
    report.mirror_unchecked = "a Data.fs has no JSON mirror";
    return;
  }
  StorageOptions options = parsed.options();
  options.read_only = true;
  options.create = false;
  auto db = backend::open_adapter(parsed, options);
  report.current_checked = db->keep_history();
  backend::CurrentFaults faults = db->current_faults();
  report.current_faults = faults.count;
  report.current_fault_oids = std::move(faults.oids);
  db.reset();
  try {
    report.mirror = mirror_status(uri);
  } catch (const SchemaError& e) {
    report.mirror_unchecked = e.what();  // no mirror tables (a RelStorage database)
  }
}

std::string oid_list(const std::vector<Oid>& oids, uint64_t count) {
  std::string out;
  for (const Oid oid : oids) out += " " + oid.hex();
  return out + (count > oids.size() ? " …" : "");
}

std::string mirror_text(const VerifyReport& r) {
  if (!r.mirror) return "JSON mirror not checked: " + r.mirror_unchecked + "\n";
  const MirrorStatus& m = *r.mirror;
  const std::string counts = std::to_string(m.rows) + " rows, " + std::to_string(m.pending) +
                             " states pending, " + std::to_string(m.orphaned) +
                             " rows of objects that no longer exist, " +
                             std::to_string(m.undecodable) + " undecodable";
  if (r.mirror_behind()) {
    return "ERROR: the in-commit JSON mirror differs from the data (" + counts +
           "): other software wrote without it; `relstore json-mirror follow --once` "
           "repairs it\n";
  }
  std::string out = std::string("JSON mirror ") + mirror_mode_name(m.mode);
  if (m.mode == MirrorMode::off) return out + "\n";
  out += ": " + counts;
  if (m.mode == MirrorMode::follow) {
    char lag[64] = ", nothing mirrored yet";
    if (m.lag_seconds) std::snprintf(lag, sizeof lag, ", lag %.3f s", *m.lag_seconds);
    out += lag;
  }
  return out + "\n";
}

}  // namespace

VerifyReport verify_storage(const std::string& uri) {
  auto storage = open_read_only(uri);
  auto inst = storage->new_instance();
  VerifyReport report;
  ObjectGraph graph;
  std::unordered_set<uint64_t> exists;
  for (auto r = inst->record_iternext(std::nullopt); r;
       r = r->next ? inst->record_iternext(r->next) : std::nullopt) {
    ++report.objects;
    exists.insert(r->oid.value());
    try {
      graph.add(r->oid, r->data);
    } catch (const PickleError&) {
      if (report.unreadable_oids.size() < kVerifyListed) report.unreadable_oids.push_back(r->oid);
      ++report.unreadable;
    }
  }
  report.has_root = exists.count(0) > 0;
  std::vector<uint64_t> sorted(exists.begin(), exists.end());
  std::sort(sorted.begin(), sorted.end());
  for (const uint64_t oid : sorted) {
    const auto* refs = graph.references(oid);
    if (!refs) continue;
    report.references += refs->size();
    for (const uint64_t to : *refs) {
      if (exists.count(to)) continue;
      if (report.dangling_refs.size() < kVerifyListed) {
        report.dangling_refs.emplace_back(Oid(oid), Oid(to));
      }
      ++report.dangling;
    }
  }
  if (report.has_root) {
    std::unordered_set<uint64_t> live;
    graph.reach({0}, live);
    for (const uint64_t oid : sorted) report.unreachable += live.count(oid) ? 0 : 1;
  }
  inst.reset();
  storage->close();
  check_database(uri, report);
  return report;
}

std::string format_verify_report(const VerifyReport& r, bool json) {
  if (json) {
    nlohmann::json dangling = nlohmann::json::array();
    for (const auto& [from, to] : r.dangling_refs) {
      dangling.push_back({{"from", from.hex()}, {"to", to.hex()}});
    }
    nlohmann::json unreadable = nlohmann::json::array();
    for (const Oid oid : r.unreadable_oids) unreadable.push_back(oid.hex());
    nlohmann::json current = nlohmann::json::array();
    for (const Oid oid : r.current_fault_oids) current.push_back(oid.hex());
    nlohmann::json mirror;  // null when not checked
    if (r.mirror) mirror = nlohmann::json::parse(format_mirror_status(*r.mirror, true));
    const nlohmann::json j = {
        {"ok", r.ok()},
        {"objects", r.objects},
        {"references", r.references},
        {"has_root", r.has_root},
        {"dangling", r.dangling},
        {"dangling_refs", dangling},
        {"unreachable", r.has_root ? nlohmann::json(r.unreachable) : nlohmann::json()},
        {"unreadable", r.unreadable},
        {"unreadable_oids", unreadable},
        {"current_checked", r.current_checked},
        {"current_faults", r.current_faults},
        {"current_fault_oids", current},
        {"mirror", mirror},
        {"mirror_unchecked", r.mirror ? nlohmann::json() : nlohmann::json(r.mirror_unchecked)},
    };
    return j.dump(2) + "\n";
  }
  std::string out =
      std::to_string(r.objects) + " objects, " + std::to_string(r.references) + " references\n";
  if (r.objects > 0 && !r.has_root) out += "ERROR: no root object (oid 0)\n";
  if (r.dangling > 0) {
    out += "ERROR: " + std::to_string(r.dangling) +
           " references to objects that do not exist (loading them raises POSKeyError):\n";
    for (const auto& [from, to] : r.dangling_refs) {
      out += "  " + from.hex() + " -> " + to.hex() + "\n";
    }
    if (r.dangling > r.dangling_refs.size()) out += "  …\n";
  }
  if (r.has_root) {
    out += std::to_string(r.unreachable) +
           (r.unreadable == 0
                ? " objects unreachable from the root (a pack with garbage collection removes "
                  "them)\n"
                : " objects not reached from the root (some may be reached through the "
                  "records below, whose references cannot be read)\n");
  }
  if (r.unreadable > 0) {
    out += "warning: the references of " + std::to_string(r.unreadable) +
           " records cannot be read, so what they reference was not checked:";
    out += oid_list(r.unreadable_oids, r.unreadable) + "\n";
  }
  if (r.current_faults > 0) {
    out += "ERROR: " + std::to_string(r.current_faults) +
           " objects whose current_object row does not name their newest revision in "
           "object_state (loads read a wrong revision or raise POSKeyError):" +
           oid_list(r.current_fault_oids, r.current_faults) + "\n";
  } else if (r.current_checked) {
    out += "current_object names every object's newest revision\n";
  }
  out += mirror_text(r);
  out += r.ok() ? "ok\n" : "FAILED\n";
  return out;
}

}  // namespace relstore
