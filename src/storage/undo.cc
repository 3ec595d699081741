#include "storage/undo.h"

#include <algorithm>

#include "conflict_resolution.h"
#include "relstore/errors.h"

namespace relstore {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int sextet(char c) {
  for (int i = 0; i < 64; ++i) {
    if (kAlphabet[i] == c) return i;
  }
  return -1;
}

}  // namespace

// 8 bytes are two groups of three and one of two: 12 characters, the last one "=".
std::string undo_id(Tid tid) {
  const std::string b = tid.bytes();
  std::string out;
  for (size_t i = 0; i < 8; i += 3) {
    const size_t n = std::min<size_t>(3, 8 - i);
    uint32_t group = 0;
    for (size_t k = 0; k < 3; ++k) {
      group = (group << 8) | (k < n ? static_cast<unsigned char>(b[i + k]) : 0);
    }
    for (size_t k = 0; k < 4; ++k) {
      out += k <= n ? kAlphabet[(group >> (18 - 6 * k)) & 63] : '=';
    }
  }
  return out;
}

Tid tid_of_undo_id(std::string_view id) {
  // ZODB's ids come from base64.encodebytes without its newline; one with it is accepted.
  if (!id.empty() && id.back() == '\n') id.remove_suffix(1);
  const UndoError bad("not an undo id (base64 of an 8-byte TID, as undo_log gives): '" +
                      std::string(id.substr(0, 40)) + "'");
  if (id.size() != 12 || id[11] != '=') throw bad;
  // 11 characters of 6 bits: the TID's 64 and two bits of zero padding.
  uint64_t v = 0;
  for (size_t i = 0; i < 11; ++i) {
    const int s = sextet(id[i]);
    if (s < 0 || (i == 10 && (s & 3))) throw bad;
    v = i < 10 ? (v << 6) | static_cast<uint64_t>(s) : (v << 4) | static_cast<uint64_t>(s >> 2);
  }
  return Tid(v);
}

std::vector<UndoInfo> StorageInstance::undo_log(int64_t, int64_t, const UndoFilter&) { return {}; }

std::vector<Oid> StorageInstance::undo(std::string_view, const TransactionMetaData&) {
  throw UndoError("this storage cannot undo transactions");
}

namespace undo {

std::vector<UndoInfo> log(int64_t first, int64_t last, const UndoFilter& filter, const Page& page) {
  if (first < 0) first = 0;
  if (last < 0) last = first - last;
  std::vector<UndoInfo> out;
  if (last <= first) return out;
  // Without a filter one page holds the answer; with one, pages of the same size follow.
  const size_t limit = static_cast<size_t>(last);
  int64_t position = 0;  // among the entries the filter accepts
  Tid below(0x7fffffffffffffffULL);
  for (;;) {
    const auto entries = page(below, limit);
    for (const HistoryEntry& e : entries) {
      UndoInfo info{undo_id(e.tid), e.tid, e.time, e.user, e.description, e.extension};
      if (filter && !filter(info)) continue;
      if (position >= first) out.push_back(std::move(info));
      if (++position >= last) return out;
    }
    if (entries.size() < limit) return out;
    below = entries.back().tid;
  }
}

std::optional<Bytes> state_after(const Revisions& r, Tid undone_tid,
                                 const ConflictResolver& resolver) {
  const std::string what = "cannot undo transaction " + undone_tid.hex() + ": ";
  if (r.oid.is_zero() && !r.before) {
    throw UndoError(what + "it created the root object", r.oid);
  }
  if (r.current == r.undone) return r.before;
  const UndoError changed(what + "object " + r.oid.hex() + " was changed by a later transaction (" +
                              r.current_tid.hex() + ")" +
                              (resolver ? " and its conflict resolver did not merge it" : ""),
                          r.oid);
  if (!resolver || !r.current || !r.undone || !r.before) throw changed;
  const ConflictError unresolved(r.oid, std::make_pair(r.current_tid, undone_tid));
  try {
    return resolve_with(
        resolver,
        ConflictInput{r.oid, undone_tid, r.current_tid, &*r.undone, *r.current, *r.before},
        unresolved);
  } catch (const ConflictError&) {
    throw changed;
  }
}

}  // namespace undo
}  // namespace relstore
