// Builds Data.fs bytes by hand, so tests can write exactly the (mal)formed file they need.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "filestorage/format.h"

namespace relstore::testing {

struct RawRecord {
  uint64_t oid = 0;
  std::optional<std::string> data;  // none: plen 0 and `back` follows
  uint64_t back = 0;
  std::optional<uint64_t> prev;  // default: the oid's previous record in this file
  uint16_t vlen = 0;
};

inline RawRecord with_data(uint64_t oid, std::string data) {
  RawRecord r;
  r.oid = oid;
  r.data = std::move(data);
  return r;
}
// plen 0 followed by `back` (0: absent).
inline RawRecord with_back(uint64_t oid, uint64_t back) {
  RawRecord r;
  r.oid = oid;
  r.back = back;
  return r;
}

class RawDataFs {
 public:
  explicit RawDataFs(std::string magic = "FS30") : bytes(std::move(magic)) {}

  // Appends a transaction; returns its offset. `record_pos` gets each record's offset.
  uint64_t add(uint64_t tid, const std::vector<RawRecord>& records, char status = ' ',
               const std::string& user = "", const std::string& description = "",
               const std::string& extension = "") {
    const uint64_t tpos = bytes.size();
    std::string body;
    std::map<uint64_t, uint64_t> updated;
    uint64_t rpos = tpos + fs::kTxnHeaderSize + user.size() + description.size() + extension.size();
    for (const RawRecord& r : records) {
      fs::DataHeader d;
      d.oid = Oid(r.oid);
      d.tid = Tid(tid);
      d.prev = r.prev ? *r.prev : (last_pos.count(r.oid) ? last_pos[r.oid] : 0);
      d.tloc = tpos;
      d.vlen = r.vlen;
      d.plen = r.data ? r.data->size() : 0;
      fs::append_data_header(body, d);
      if (r.data) {
        body += *r.data;
      } else {
        fs::append_be64(body, r.back);
      }
      record_pos.push_back(rpos);
      updated[r.oid] = rpos;
      rpos = tpos + fs::kTxnHeaderSize + user.size() + description.size() + extension.size() +
             body.size();
    }
    fs::TxnHeader h;
    h.tid = Tid(tid);
    h.status = status;
    h.ulen = static_cast<uint16_t>(user.size());
    h.dlen = static_cast<uint16_t>(description.size());
    h.elen = static_cast<uint16_t>(extension.size());
    h.tlen = fs::kTxnHeaderSize + user.size() + description.size() + extension.size() + body.size();
    fs::append_txn_header(bytes, h);
    bytes += user + description + extension + body;
    fs::append_be64(bytes, h.tlen);
    for (auto [oid, pos] : updated) last_pos[oid] = pos;
    return tpos;
  }

  void write(const std::string& path) const {
    std::ofstream(path, std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }

  // Overwrites 8 bytes at `pos` with a big-endian number.
  void poke64(uint64_t pos, uint64_t v) {
    std::string b;
    fs::append_be64(b, v);
    bytes.replace(pos, 8, b);
  }

  std::string bytes;
  std::map<uint64_t, uint64_t> last_pos;
  std::vector<uint64_t> record_pos;
};

}  // namespace relstore::testing
