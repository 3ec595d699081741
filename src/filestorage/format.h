// The byte layout of Data.fs (filestorage.md): header sizes and the decoded headers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "relstore/types.h"

namespace relstore::fs {

inline constexpr std::string_view kMagicFS30 = "FS30";
inline constexpr std::string_view kMagicFS21 = "FS21";
inline constexpr uint64_t kMagicSize = 4;
inline constexpr uint64_t kTxnHeaderSize = 23;
// Where a transaction header's status byte is: after the tid and the tlen.
inline constexpr uint64_t kTxnStatusOffset = 16;
inline constexpr uint64_t kDataHeaderSize = 42;
inline constexpr uint64_t kTrailerSize = 8;        // the redundant tlen after a transaction
inline constexpr uint64_t kBackPointerSize = 8;    // what follows a data header when plen == 0
inline constexpr uint64_t kMaxMetaLength = 65535;  // ulen, dlen and elen are 16-bit

struct TxnHeader {
  uint64_t pos = 0;  // offset of the header
  Tid tid;
  uint64_t tlen = 0;
  char status = ' ';
  uint16_t ulen = 0, dlen = 0, elen = 0;

  uint64_t user_pos() const { return pos + kTxnHeaderSize; }
  uint64_t description_pos() const { return user_pos() + ulen; }
  uint64_t extension_pos() const { return description_pos() + dlen; }
  uint64_t records_begin() const { return extension_pos() + elen; }
  // Offset of the trailing tlen; data records end exactly here.
  uint64_t records_end() const { return pos + tlen; }
  // Offset of the next transaction.
  uint64_t next() const { return pos + tlen + kTrailerSize; }
};

struct DataHeader {
  uint64_t pos = 0;  // offset of the header
  Oid oid;
  Tid tid;
  uint64_t prev = 0;
  uint64_t tloc = 0;
  uint16_t vlen = 0;
  uint64_t plen = 0;
  uint64_t back = 0;  // meaningful only when plen == 0

  bool has_data() const { return plen != 0; }
  // Absent in this revision by itself (a chain may still end in absence, see Scanner).
  bool is_absent() const { return plen == 0 && back == 0; }
  uint64_t data_pos() const { return pos + kDataHeaderSize; }
  // Bytes the record occupies on disk.
  uint64_t size() const { return kDataHeaderSize + (plen ? plen : kBackPointerSize); }
};

inline uint16_t read_be16(const unsigned char* p) {
  return static_cast<uint16_t>((p[0] << 8) | p[1]);
}
inline void write_be16(unsigned char* p, uint16_t v) {
  p[0] = static_cast<unsigned char>(v >> 8);
  p[1] = static_cast<unsigned char>(v & 0xff);
}

// Decode headers from at least kTxnHeaderSize / kDataHeaderSize bytes; no checks.
TxnHeader decode_txn_header(const unsigned char* p, uint64_t pos);
DataHeader decode_data_header(const unsigned char* p, uint64_t pos);

// Append encoded headers to `out`.
void append_txn_header(std::string& out, const TxnHeader& h);
void append_data_header(std::string& out, const DataHeader& h);
void append_be64(std::string& out, uint64_t v);

// "' '" style rendering of a status byte for messages (printable or \xNN).
std::string status_repr(char status);

}  // namespace relstore::fs
