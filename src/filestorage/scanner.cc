#include "filestorage/scanner.h"

#include <algorithm>
#include <array>
#include <deque>
#include <iostream>
#include <vector>

namespace relstore::fs {
namespace {

std::string num(uint64_t v) { return std::to_string(v); }

bool known_status(char status) {
  return status == ' ' || status == 'p' || status == 'u' || status == 'c';
}

}  // namespace

Scanner::Scanner(std::shared_ptr<const FileMap> map, FileStorageWarning warn,
                 std::optional<uint64_t> limit)
    : map_(std::move(map)), warn_(std::move(warn)) {
  limit_ = limit ? std::min(*limit, map_->size()) : map_->size();
}

uint64_t Scanner::committed_end() const {
  const auto last = transaction_ending_at_limit();
  return last && last->status != 'c' ? limit_ : 0;
}

void Scanner::fail(uint64_t offset, const std::string& problem, std::optional<Oid> oid) const {
  throw FileStorageError(map_->path(), offset, problem, oid);
}

void Scanner::warn(const std::string& message) const {
  if (warn_) {
    warn_(message);
  } else {
    std::cerr << "relstore: warning: " << message << '\n';
  }
}

std::string_view Scanner::check_magic() const {
  if (limit_ == 0) fail(0, "empty file: not a FileStorage");
  if (limit_ < kMagicSize) fail(0, "file too short for the FileStorage magic");
  const std::string_view magic = map_->view(0, kMagicSize);
  if (magic != kMagicFS30 && magic != kMagicFS21) {
    fail(0, "bad magic: not a FileStorage (expected FS30 or FS21)");
  }
  return magic;
}

void Scanner::check_header(const TxnHeader& h) const {
  if (!known_status(h.status)) {
    fail(h.pos + 16,
         "invalid transaction status " + status_repr(h.status) + " (tid " + h.tid.hex() + ")");
  }
  const uint64_t meta = kTxnHeaderSize + h.ulen + h.dlen + h.elen;
  if (h.tlen < meta) {
    fail(h.pos + 8, "transaction length " + num(h.tlen) +
                        " is shorter than its header and metadata (" + num(meta) + " bytes)");
  }
}

bool Scanner::next(uint64_t& pos, TxnHeader& h, std::vector<DataHeader>* records) {
  // Once per scanner, when it first walks (loads build scanners and never walk).
  if (!stable_end_) stable_end_ = committed_end();
  for (;;) {
    if (pos >= limit_) return false;
    const uint64_t left = limit_ - pos;
    if (left < kTxnHeaderSize) {
      return stop_at_tail(pos, map_->path() + " has a truncated tail: " + num(left) +
                                   " bytes of a transaction header at byte offset " + num(pos));
    }
    if (pos + kTxnHeaderSize <= *stable_end_) {
      h = decode_txn_header(map_->at(pos), pos);
    } else {
      unsigned char header[kTxnHeaderSize];
      if (!map_->read(pos, kTxnHeaderSize, header)) return shrank(pos);
      h = decode_txn_header(header, pos);
    }
    if (h.status == 'c') {
      return stop_at_tail(pos, map_->path() + ": the transaction at byte offset " + num(pos) +
                                   " (tid " + h.tid.hex() +
                                   ") has status 'c' (its commit never finished)");
    }
    if (h.tlen > left || left - h.tlen < kTrailerSize) {
      return stop_at_tail(pos, map_->path() + " has a truncated tail: the transaction at byte " +
                                   "offset " + num(pos) + " (tid " + h.tid.hex() + ") needs " +
                                   num(h.tlen) + " + 8 bytes but the file ends " + num(left) +
                                   " bytes after it");
    }
    if (h.status == '\0' && zeros_to_limit(pos)) {  // (no valid header has that status)
      // What a crash can leave when the file's size reached the disk before its data.
      warn(map_->path() + " ends in " + num(left) + " zero bytes from byte offset " + num(pos) +
           " (left by a crash); reading stops at the last complete transaction");
      return false;
    }
    if (!known_status(h.status) || h.tlen < kTxnHeaderSize + h.ulen + h.dlen + h.elen) {
      // A header that is not one. When its own trailing length does not confirm it either,
      // it is what a crash leaves when an append's first bytes reached the disk and the
      // rest of the new size reads as zeros: a tail, as ZODB takes it (and damage when a
      // complete transaction still ends the file after it). Confirmed, it is an error.
      unsigned char trailer[kTrailerSize];
      const bool confirmed = h.tlen >= kTxnHeaderSize &&
                             map_->read(h.records_end(), kTrailerSize, trailer) &&
                             read_be64(trailer) == h.tlen;
      if (!confirmed) {
        return stop_at_tail(pos, map_->path() + ": the transaction header at byte offset " +
                                     num(pos) + " is not one (status " + status_repr(h.status) +
                                     ", length " + num(h.tlen) + ") and nothing confirms it");
      }
    }
    check_header(h);
    if (last_tid_ && h.tid <= *last_tid_) {
      fail(pos, "tid " + h.tid.hex() + " is not greater than the previous transaction's tid " +
                    last_tid_->hex());
    }
    const uint64_t trailer = read_be64(map_->at(h.records_end()));
    if (trailer != h.tlen) {
      fail(h.records_end(), "trailing transaction length " + num(trailer) +
                                " differs from the length " + num(h.tlen) +
                                " in the header of the transaction at byte offset " + num(pos));
    }
    last_tid_ = h.tid;
    pos = h.next();
    // 'u': undone by a pack-less undo in ancient ZODBs; its records are not part of history.
    if (h.status == 'u') continue;
    check_records(h, records);
    return true;
  }
}

bool Scanner::shrank(uint64_t pos) const {
  warn(map_->path() + " became shorter while it was read (a commit was aborted and its " +
       "transaction cut off); reading stops at byte offset " + num(pos));
  return false;
}

bool Scanner::stop_at_tail(uint64_t pos, const std::string& what) const {
  const auto last = transaction_ending_at_limit();
  unsigned char last_byte;
  if (!last && !map_->read(limit_ - 1, 1, &last_byte)) return shrank(pos);
  if (last && last->pos > pos) {
    fail(pos, what + ", yet a complete transaction (tid " + last->tid.hex() + ") at byte offset " +
                  num(last->pos) +
                  " ends the file: the file is damaged here, not cut short, "
                  "and what follows cannot be read");
  }
  warn(what + "; reading stops at the last complete transaction");
  return false;
}

std::optional<TxnHeader> Scanner::transaction_ending_at_limit() const {
  // read(), not the map: this is the part of the file that may be cut meanwhile.
  unsigned char trailer[kTrailerSize], header[kTxnHeaderSize];
  if (limit_ < kMagicSize + kTxnHeaderSize + kTrailerSize ||
      !map_->read(limit_ - kTrailerSize, kTrailerSize, trailer)) {
    return std::nullopt;
  }
  const uint64_t tlen = read_be64(trailer);
  if (tlen < kTxnHeaderSize || tlen > limit_ - kTrailerSize - kMagicSize ||
      !map_->read(limit_ - kTrailerSize - tlen, kTxnHeaderSize, header)) {
    return std::nullopt;
  }
  const TxnHeader h = decode_txn_header(header, limit_ - kTrailerSize - tlen);
  if (h.tlen != tlen || !known_status(h.status) ||
      h.tlen < kTxnHeaderSize + uint64_t{h.ulen} + h.dlen + h.elen) {
    return std::nullopt;
  }
  return h;
}

bool Scanner::zeros_to_limit(uint64_t pos) const {
  // Through read(), a block at a time: the first non-zero byte (a valid header's status is
  // one) usually ends it at once. A file cut meanwhile is not all zeros to the limit.
  std::array<unsigned char, 65536> block;
  for (uint64_t at = pos; at < limit_;) {
    const uint64_t n = std::min<uint64_t>(block.size(), limit_ - at);
    if (!map_->read(at, n, block.data())) return false;
    if (!std::all_of(block.begin(), block.begin() + static_cast<ptrdiff_t>(n),
                     [](unsigned char c) { return c == 0; })) {
      return false;
    }
    at += n;
  }
  return true;
}

TxnHeader Scanner::previous(uint64_t end, std::vector<DataHeader>* records) const {
  if (end > limit_ || end < kMagicSize + kTxnHeaderSize + kTrailerSize) {
    fail(end, "no complete transaction can end here (walking backward)");
  }
  // The last transaction, ending at the limit, is the only one another process may cut
  // meanwhile (an unfinished commit ZODB aborts): its trailer and header are read with
  // read(), where a mapped page past the new end would fault. Earlier ones through the map.
  const bool at_end = end == limit_;
  unsigned char trailer[kTrailerSize], header[kTxnHeaderSize];
  if (!at_end) {
    std::copy_n(map_->at(end - kTrailerSize), kTrailerSize, trailer);
  } else if (!map_->read(end - kTrailerSize, kTrailerSize, trailer)) {
    fail(end,
         "the file became shorter than this offset while it was read (a commit was "
         "aborted and its transaction cut off)");
  }
  const uint64_t tlen = read_be64(trailer);
  const uint64_t room = end - kTrailerSize - kMagicSize;
  if (tlen > room || tlen < kTxnHeaderSize) {
    fail(end - kTrailerSize, "trailing transaction length " + num(tlen) +
                                 " does not fit between the magic and this offset");
  }
  const uint64_t tpos = end - kTrailerSize - tlen;
  if (!at_end) {
    std::copy_n(map_->at(tpos), kTxnHeaderSize, header);
  } else if (!map_->read(tpos, kTxnHeaderSize, header)) {
    fail(tpos, "the file became shorter than this offset while it was read");
  }
  TxnHeader h = decode_txn_header(header, tpos);
  if (h.tlen != tlen) {
    fail(tpos + 8, "transaction length " + num(h.tlen) + " in the header differs from the " +
                       "trailing length " + num(tlen) + " at byte offset " +
                       num(end - kTrailerSize));
  }
  check_header(h);
  if (h.status == ' ' || h.status == 'p') check_records(h, records);
  return h;
}

void Scanner::check_records(const TxnHeader& h, std::vector<DataHeader>* records) const {
  if (records) records->clear();
  const uint64_t end = h.records_end();
  uint64_t p = h.records_begin();
  while (p < end) {
    if (end - p < kDataHeaderSize) {
      fail(p, "a data record header would run past the end of the transaction at byte offset " +
                  num(h.pos) + " (its records must end exactly at " + num(end) + ")");
    }
    DataHeader d = decode_data_header(map_->at(p), p);
    if (d.vlen != 0) {
      fail(p + 32,
           "data record has a version (vlen " + num(d.vlen) +
               "); ZODB versions were removed in ZODB 3.9 and are not supported",
           d.oid);
    }
    if (d.tloc != h.pos) {
      fail(p + 24,
           "data record's transaction offset (tloc) is " + num(d.tloc) + ", expected " + num(h.pos),
           d.oid);
    }
    if (d.tid != h.tid) {
      fail(p + 8,
           "data record tid " + d.tid.hex() + " differs from its transaction's tid " + h.tid.hex(),
           d.oid);
    }
    if (d.prev != 0 && (d.prev < kMagicSize || d.prev >= h.pos)) {
      fail(
          p + 16,
          "previous-revision offset " + num(d.prev) + " does not point into an earlier transaction",
          d.oid);
    }
    const uint64_t body = d.plen ? d.plen : kBackPointerSize;
    if (body > end - p - kDataHeaderSize) {
      fail(p,
           "data record (plen " + num(d.plen) +
               ") runs past the end of its transaction at byte offset " + num(end),
           d.oid);
    }
    if (d.plen == 0) {
      d.back = read_be64(map_->at(p + kDataHeaderSize));
      if (d.back != 0) back_target(d);  // throws if the pointer is bad
    }
    if (records) records->push_back(d);
    p += kDataHeaderSize + body;
  }
}

DataHeader Scanner::linked_record(const DataHeader& rec, uint64_t target, uint64_t field_pos,
                                  const char* what) const {
  const std::string w = what;
  if (target >= limit_) {
    fail(field_pos, w + " " + num(target) + " points outside the file (" + num(limit_) + " bytes)",
         rec.oid);
  }
  if (target < kMagicSize || target >= rec.pos) {
    fail(field_pos, w + " " + num(target) + " does not point to an earlier data record", rec.oid);
  }
  if (!map_->has(target, kDataHeaderSize)) {
    fail(field_pos, w + " " + num(target) + " does not point to a whole data record", rec.oid);
  }
  DataHeader t = decode_data_header(map_->at(target), target);
  if (t.oid != rec.oid) {
    fail(field_pos,
         w + " " + num(target) + " points to a record of oid " + t.oid.hex() + ", not of this oid",
         rec.oid);
  }
  // The target must sit inside the transaction its tloc names, or it is not a record at all.
  bool ok =
      t.vlen == 0 && t.tloc >= kMagicSize && t.tloc < target && map_->has(t.tloc, kTxnHeaderSize);
  if (ok) {
    const TxnHeader th = decode_txn_header(map_->at(t.tloc), t.tloc);
    // Overflow-safe: plen comes from the file and may be anything.
    ok = th.tid == t.tid && map_->has(th.pos, th.tlen) && target >= th.records_begin() &&
         target < th.records_end() && th.records_end() - target >= kDataHeaderSize &&
         (t.plen ? t.plen : kBackPointerSize) <= th.records_end() - target - kDataHeaderSize;
    // A back pointer must land where a record starts, not on bytes inside a pickle that
    // happen to look like one (starts_record). Previous-revision offsets, which history
    // walks follow at every step, keep the header checks above.
    if (ok && w == "back pointer") ok = starts_record(th, target);
  }
  if (!ok) {
    fail(field_pos, w + " " + num(target) + " does not point to a valid data record", rec.oid);
  }
  if (t.plen == 0) t.back = read_be64(map_->at(target + kDataHeaderSize));
  return t;
}

bool Scanner::starts_record(const TxnHeader& th, uint64_t target) const {
  // The record starts of the transactions last asked about, per thread: an undo of large
  // transactions points many back pointers into them (alternately, when the undone
  // transaction changed objects created by several), and walking a transaction for each
  // would make opening such a file quadratic (40,000 of them took 48 s). Bounded by the
  // offsets it holds; the oldest transaction goes first.
  constexpr size_t kMaxOffsets = size_t{1} << 18;  // 2 MiB of offsets
  struct Starts {
    uint64_t map = 0;  // FileMap::serial(): a freed map's address may come back
    uint64_t limit = 0;
    std::unordered_map<uint64_t, std::vector<uint64_t>> by_txn;
    std::deque<uint64_t> order;
    size_t offsets = 0;
  };
  thread_local Starts cache;
  if (cache.map != map_->serial() || cache.limit != limit_) {
    cache = Starts{map_->serial(), limit_, {}, {}, 0};
  }
  auto it = cache.by_txn.find(th.pos);
  if (it == cache.by_txn.end()) {
    std::vector<uint64_t> offsets;
    uint64_t p = th.records_begin();
    while (p < th.records_end() && th.records_end() - p >= kDataHeaderSize) {
      const DataHeader d = decode_data_header(map_->at(p), p);
      const uint64_t body = d.plen ? d.plen : kBackPointerSize;
      if (body > th.records_end() - p - kDataHeaderSize) break;
      offsets.push_back(p);
      p += kDataHeaderSize + body;
    }
    while (!cache.order.empty() && cache.offsets + offsets.size() > kMaxOffsets) {
      cache.offsets -= cache.by_txn[cache.order.front()].size();
      cache.by_txn.erase(cache.order.front());
      cache.order.pop_front();
    }
    cache.offsets += offsets.size();
    cache.order.push_back(th.pos);
    it = cache.by_txn.emplace(th.pos, std::move(offsets)).first;
  }
  return std::binary_search(it->second.begin(), it->second.end(), target);
}

DataHeader Scanner::back_target(const DataHeader& rec) const {
  return linked_record(rec, rec.back, rec.pos + kDataHeaderSize, "back pointer");
}

DataHeader Scanner::prev_record(const DataHeader& rec) const {
  return linked_record(rec, rec.prev, rec.pos + 16, "previous-revision offset");
}

std::optional<std::string_view> Scanner::resolve(const DataHeader& rec) const {
  if (rec.plen != 0) return map_->view(rec.data_pos(), rec.plen);
  if (rec.back == 0) return std::nullopt;
  // Each hop goes strictly backward (checked), so the walk ends; a record met before
  // ends it at once.
  std::vector<uint64_t> hops;
  DataHeader cur = rec;
  uint64_t found = 0;  // offset of the record with the data; 0: absent
  for (;;) {
    if (const auto known = resolved_.find(cur.pos); known != resolved_.end()) {
      found = known->second;
      break;
    }
    hops.push_back(cur.pos);
    if (cur.back == 0) break;
    cur = back_target(cur);
    if (cur.plen != 0) {
      found = cur.pos;
      break;
    }
  }
  if (resolved_.size() + hops.size() > (size_t{1} << 20)) resolved_.clear();
  for (uint64_t pos : hops) resolved_[pos] = found;
  if (found == 0) return std::nullopt;
  const DataHeader data = found == cur.pos ? cur : data_header_at(found);
  return map_->view(data.data_pos(), data.plen);
}

TxnHeader Scanner::txn_header_at(uint64_t tloc) const {
  if (!map_->has(tloc, kTxnHeaderSize)) fail(tloc, "transaction header outside the file");
  return decode_txn_header(map_->at(tloc), tloc);
}

DataHeader Scanner::data_header_at(uint64_t pos) const {
  if (!map_->has(pos, kDataHeaderSize + kBackPointerSize)) {
    fail(pos, "data record outside the file");
  }
  DataHeader d = decode_data_header(map_->at(pos), pos);
  if (d.plen == 0) d.back = read_be64(map_->at(pos + kDataHeaderSize));
  return d;
}

namespace {

void assign(Bytes& dst, std::string_view src) { dst.assign(src.data(), src.size()); }

}  // namespace

void Scanner::fill(const TxnHeader& h, const std::vector<DataHeader>& records,
                   TransactionRecord& out) const {
  out.tid = h.tid;
  out.status = h.status;
  assign(out.user, user(h));
  assign(out.description, description(h));
  assign(out.extension, extension(h));
  // resize + assign keeps the string buffers of a reused TransactionRecord.
  out.records.resize(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const DataHeader& d = records[i];
    DataRecord& r = out.records[i];
    r.oid = d.oid;
    r.tid = d.tid;
    r.data_txn.reset();
    std::optional<std::string_view> data;
    if (d.plen) {
      data = map_->view(d.data_pos(), d.plen);
    } else if (d.back) {
      const DataHeader target = back_target(d);
      r.data_txn = target.tid;
      data = resolve(target);
    }
    if (!data) {
      r.data.reset();
    } else if (r.data) {
      assign(*r.data, *data);
    } else {
      r.data.emplace(*data);
    }
  }
}

}  // namespace relstore::fs
