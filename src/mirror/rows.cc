#include "mirror/rows.h"

#include <cstdio>

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
    std::fprintf(stderr, "relstore json-mirror: oid %s (tid %s) is not decodable: %s\n",
                 oid.hex().c_str(), tid.hex().c_str(), e.what());
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

}  // namespace relstore::mirror
