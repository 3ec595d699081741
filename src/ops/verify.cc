// `relstore verify`: reads every current object, in one snapshot, and checks the
// references between them.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_set>

#include "ops/open_read_only.h"
#include "relstore/ops.h"
#include "relstore/pickle.h"
#include "storage/object_graph.h"

namespace relstore {

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
    for (const Oid oid : r.unreadable_oids) out += " " + oid.hex();
    out += r.unreadable > r.unreadable_oids.size() ? " …\n" : "\n";
  }
  out += r.ok() ? "ok\n" : "FAILED\n";
  return out;
}

}  // namespace relstore
