#include "filestorage/format.h"

#include <cstdio>

namespace relstore::fs {

TxnHeader decode_txn_header(const unsigned char* p, uint64_t pos) {
  TxnHeader h;
  h.pos = pos;
  h.tid = Tid(read_be64(p));
  h.tlen = read_be64(p + 8);
  h.status = static_cast<char>(p[16]);
  h.ulen = read_be16(p + 17);
  h.dlen = read_be16(p + 19);
  h.elen = read_be16(p + 21);
  return h;
}

DataHeader decode_data_header(const unsigned char* p, uint64_t pos) {
  DataHeader h;
  h.pos = pos;
  h.oid = Oid(read_be64(p));
  h.tid = Tid(read_be64(p + 8));
  h.prev = read_be64(p + 16);
  h.tloc = read_be64(p + 24);
  h.vlen = read_be16(p + 32);
  h.plen = read_be64(p + 34);
  return h;
}

void append_be64(std::string& out, uint64_t v) {
  unsigned char b[8];
  write_be64(b, v);
  out.append(reinterpret_cast<const char*>(b), 8);
}

void append_txn_header(std::string& out, const TxnHeader& h) {
  unsigned char b[kTxnHeaderSize];
  write_be64(b, h.tid.value());
  write_be64(b + 8, h.tlen);
  b[16] = static_cast<unsigned char>(h.status);
  write_be16(b + 17, h.ulen);
  write_be16(b + 19, h.dlen);
  write_be16(b + 21, h.elen);
  out.append(reinterpret_cast<const char*>(b), sizeof b);
}

void append_data_header(std::string& out, const DataHeader& h) {
  unsigned char b[kDataHeaderSize];
  write_be64(b, h.oid.value());
  write_be64(b + 8, h.tid.value());
  write_be64(b + 16, h.prev);
  write_be64(b + 24, h.tloc);
  write_be16(b + 32, h.vlen);
  write_be64(b + 34, h.plen);
  out.append(reinterpret_cast<const char*>(b), sizeof b);
}

std::string status_repr(char status) {
  const auto c = static_cast<unsigned char>(status);
  if (c >= 0x20 && c < 0x7f) return std::string("'") + status + "'";
  char buf[8];
  std::snprintf(buf, sizeof buf, "'\\x%02x'", c);
  return buf;
}

}  // namespace relstore::fs
