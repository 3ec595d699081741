#include "mirror/rows.h"

#include <cstdio>
#include <string>

namespace relstore::mirror {

void add_state(Oid oid, Tid tid, const std::optional<Bytes>& state, RecordDecoder& decoder,
               const DecodeOptions& json_options, Batch& out) {
  if (!state) {
    out.deletes.emplace_back(oid, tid);
    return;
  }
  DecodedRecord decoded;
  try {
    decoder.decode(*state, decoded, json_options);
  } catch (const PickleError& e) {
    // In-commit states have no TID yet when they are decoded (it is chosen at finish).
    const std::string when = tid.is_zero() ? "in the commit being made" : "tid " + tid.hex();
    std::fprintf(stderr, "relstore json-mirror: oid %s (%s) is not decodable: %s\n",
                 oid.hex().c_str(), when.c_str(), e.what());
    out.errors.push_back({oid, tid, e.what()});
    return;
  }
  out.rows.push_back({oid, tid, std::move(decoded.class_name), std::move(decoded.ghost_pickle),
                      std::move(decoded.json), std::move(decoded.refs)});
}

namespace {

std::string join(const std::vector<Oid>& refs, char open, char close) {
  std::string out(1, open);
  for (size_t i = 0; i < refs.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(refs[i].sql());
  }
  out += close;
  return out;
}

}  // namespace

std::string refs_json(const std::vector<Oid>& refs) { return join(refs, '[', ']'); }
std::string refs_pg_array(const std::vector<Oid>& refs) { return join(refs, '{', '}'); }

const char* settle_sql(bool keep_history) {
  if (keep_history) {
    return "UPDATE relstore_json_mirror SET last_tid = "
           "(SELECT COALESCE(MAX(tid), 0) FROM \"transaction\") "
           "WHERE id = 0 AND last_tid < (SELECT COALESCE(MAX(tid), 0) FROM \"transaction\") "
           "AND NOT EXISTS (SELECT 1 FROM current_object c "
           "JOIN object_state o ON o.zoid = c.zoid AND o.tid = c.tid "
           "WHERE c.tid > relstore_json_mirror.last_tid AND ("
           "(o.state IS NOT NULL "
           "AND NOT EXISTS (SELECT 1 FROM object_json j WHERE j.zoid = c.zoid AND j.tid = c.tid) "
           "AND NOT EXISTS (SELECT 1 FROM object_json_error e "
           "WHERE e.zoid = c.zoid AND e.tid = c.tid)) "
           "OR (o.state IS NULL AND EXISTS (SELECT 1 FROM object_json j WHERE j.zoid = c.zoid))))";
  }
  return "UPDATE relstore_json_mirror SET last_tid = "
         "(SELECT COALESCE(MAX(tid), 0) FROM object_state) "
         "WHERE id = 0 AND last_tid < (SELECT COALESCE(MAX(tid), 0) FROM object_state) "
         "AND NOT EXISTS (SELECT 1 FROM object_state o "
         "WHERE o.tid > relstore_json_mirror.last_tid "
         "AND NOT EXISTS (SELECT 1 FROM object_json j WHERE j.zoid = o.zoid AND j.tid = o.tid) "
         "AND NOT EXISTS (SELECT 1 FROM object_json_error e "
         "WHERE e.zoid = o.zoid AND e.tid = o.tid))";
}

}  // namespace relstore::mirror
