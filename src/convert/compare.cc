// Record-by-record comparison for `relstore convert --verify`.
#include <algorithm>
#include <atomic>
#include <fstream>
#include <optional>
#include <vector>

#include "relstore/blob_dir.h"
#include "relstore/convert.h"
#include "relstore/errors.h"
#include "relstore/pickle.h"

namespace relstore {
namespace {

std::string describe(const TransactionRecord& t) { return "transaction " + t.tid.hex(); }

// Appends to `out` (up to `limit`) how two transactions differ.
// Record order within a transaction carries no meaning (databases return records by oid,
// a Data.fs in the order they were stored), so records are compared sorted by oid.
void sort_records(TransactionRecord& t) {
  std::stable_sort(t.records.begin(), t.records.end(),
                   [](const DataRecord& x, const DataRecord& y) { return x.oid < y.oid; });
}

struct Blobs {
  const BlobFiles* source = nullptr;
  const BlobFiles* destination = nullptr;
};

bool stopped(const std::atomic<bool>* stop) { return stop && stop->load(); }

bool same_file_contents(const std::string& x, const std::string& y) {
  std::ifstream a(x, std::ios::binary), b(y, std::ios::binary);
  if (!a || !b) return false;
  std::vector<char> ba(1 << 16), bb(1 << 16);
  while (true) {
    a.read(ba.data(), static_cast<std::streamsize>(ba.size()));
    b.read(bb.data(), static_cast<std::streamsize>(bb.size()));
    if (a.gcount() != b.gcount()) return false;
    if (a.gcount() == 0) return a.eof() && b.eof();
    if (!std::equal(ba.begin(), ba.begin() + a.gcount(), bb.begin())) return false;
  }
}

// How the destination's blob file of revision `tid` of `oid` differs from the source's,
// if it does.
std::optional<std::string> compare_blob(Oid oid, Tid tid, const Blobs& blobs) {
  const auto in_source = blobs.source ? (*blobs.source)(oid, tid) : std::nullopt;
  const auto in_destination = (*blobs.destination)(oid, tid);
  if (in_source && !in_destination) return "blob file missing from the destination";
  if (!in_source && in_destination) {
    return "a blob file in the destination that the source does not have";
  }
  if (in_source && !same_file_contents(*in_source, *in_destination)) {
    return "blob contents differ";
  }
  return std::nullopt;
}

void compare_transaction(TransactionRecord& a, TransactionRecord& b, size_t limit,
                         const Blobs& blobs, std::vector<std::string>& out) {
  sort_records(a);
  sort_records(b);
  auto note = [&](const std::string& what) {
    if (out.size() < limit) out.push_back(describe(a) + ": " + what);
  };
  if (a.status != b.status) note("status differs");
  if (a.user != b.user) note("user differs");
  if (a.description != b.description) note("description differs");
  if (a.extension != b.extension) note("extension bytes differ");
  if (a.records.size() != b.records.size()) {
    note(std::to_string(a.records.size()) + " records in the source, " +
         std::to_string(b.records.size()) + " in the destination");
    return;
  }
  for (size_t i = 0; i < a.records.size(); ++i) {
    const DataRecord& x = a.records[i];
    const DataRecord& y = b.records[i];
    if (x.oid != y.oid) {
      note("record " + std::to_string(i) + ": oid " + x.oid.hex() + " vs " + y.oid.hex());
    } else if (x.data != y.data) {
      note("oid " + x.oid.hex() + ": data differs");
    } else if (blobs.destination && x.data && is_blob_record(*x.data)) {
      if (auto d = compare_blob(x.oid, a.tid, blobs)) note("oid " + x.oid.hex() + ": " + *d);
    }
  }
}

std::vector<std::string> compare_history(StorageInstance& src, StorageInstance& dst, size_t limit,
                                         const Blobs& blobs, const std::atomic<bool>* stop,
                                         std::optional<Tid> until) {
  std::vector<std::string> out;
  // Only the source is bounded: a destination transaction past the copy's last is not the
  // copy's, and is reported as only in the destination.
  auto a = src.iterator(std::nullopt, until);
  auto b = dst.iterator(std::nullopt, std::nullopt);
  TransactionRecord ta, tb;
  bool more_a = a->next(ta), more_b = b->next(tb);
  while ((more_a || more_b) && out.size() < limit && !stopped(stop)) {
    if (more_a && (!more_b || ta.tid < tb.tid)) {
      out.push_back(describe(ta) + ": missing from the destination");
      more_a = a->next(ta);
    } else if (more_b && (!more_a || tb.tid < ta.tid)) {
      out.push_back(describe(tb) + ": only in the destination");
      more_b = b->next(tb);
    } else {
      compare_transaction(ta, tb, limit, blobs, out);
      more_a = a->next(ta);
      more_b = b->next(tb);
    }
  }
  return out;
}

// `serials_only`: the states were compared already (with the history), only which revision
// is current is left to compare.
// `until`: the copy's last TID. Objects the source changed after it are left out (they
// cannot be compared with a copy made before); `source_moved` says the source has commits
// after it, where an object only in the destination may have been deleted from the source.
std::vector<std::string> compare_current(StorageInstance& src, StorageInstance& dst, size_t limit,
                                         const Blobs& blobs, const std::atomic<bool>* stop,
                                         std::optional<Tid> until, bool source_moved,
                                         bool serials_only = false) {
  std::vector<std::string> out;
  std::optional<RecordIterResult> a = src.record_iternext(std::nullopt);
  std::optional<RecordIterResult> b = dst.record_iternext(std::nullopt);
  auto advance = [](StorageInstance& inst, std::optional<RecordIterResult>& r) {
    r = r && r->next ? inst.record_iternext(r->next) : std::nullopt;
  };
  const auto changed_after_copy = [&](const RecordIterResult& r) {
    return until && r.tid > *until;
  };
  while ((a || b) && out.size() < limit && !stopped(stop)) {
    if (a && (!b || a->oid < b->oid)) {
      if (!changed_after_copy(*a)) {
        out.push_back("oid " + a->oid.hex() + ": missing from the destination");
      }
      advance(src, a);
    } else if (b && (!a || b->oid < a->oid)) {
      out.push_back("oid " + b->oid.hex() + ": only in the destination" +
                    (source_moved ? " (or deleted from the source after the copy)" : ""));
      advance(dst, b);
    } else if (changed_after_copy(*a)) {
      advance(src, a);
      advance(dst, b);
    } else {
      if (a->tid != b->tid) {
        out.push_back("oid " + a->oid.hex() + ": serial " + a->tid.hex() + " vs " + b->tid.hex());
      } else if (serials_only) {
        // (equal states were compared with the history)
      } else if (a->data != b->data) {
        out.push_back("oid " + a->oid.hex() + ": data differs");
      } else if (blobs.destination && is_blob_record(a->data)) {
        if (auto d = compare_blob(a->oid, a->tid, blobs)) {
          out.push_back("oid " + a->oid.hex() + ": " + *d);
        }
      }
      advance(src, a);
      advance(dst, b);
    }
  }
  return out;
}

}  // namespace

BlobFiles blob_files(const BlobDir& dir) {
  return [&dir](Oid oid, Tid tid) -> std::optional<std::string> {
    if (!dir.has_blob(oid, tid)) return std::nullopt;
    return dir.blob_path(oid, tid);
  };
}

BlobFiles blob_files(StorageInstance& instance) {
  return [&instance](Oid oid, Tid tid) -> std::optional<std::string> {
    try {
      return instance.load_blob(oid, tid);
    } catch (const POSKeyError&) {
      return std::nullopt;
    }
  };
}

std::vector<std::string> compare_storages(Storage& source, Storage& destination, size_t limit,
                                          const BlobDir* source_blobs,
                                          const BlobDir* destination_blobs,
                                          const std::atomic<bool>* stop, bool* complete,
                                          std::optional<Tid> until, Tid* source_last) {
  std::optional<BlobFiles> a, b;
  if (source_blobs) a = blob_files(*source_blobs);
  if (destination_blobs) b = blob_files(*destination_blobs);
  return compare_storages(source, destination, limit, a ? &*a : nullptr, b ? &*b : nullptr, stop,
                          complete, until, source_last);
}

std::vector<std::string> compare_storages(Storage& source, Storage& destination, size_t limit,
                                          const BlobFiles* source_blobs,
                                          const BlobFiles* destination_blobs,
                                          const std::atomic<bool>* stop, bool* complete,
                                          std::optional<Tid> until, Tid* source_last) {
  auto src = source.new_instance();
  auto dst = destination.new_instance();
  src->poll_invalidations();
  dst->poll_invalidations();
  const Tid src_last = src->last_transaction();
  if (source_last) *source_last = src_last;
  const bool source_moved = until && src_last > *until;
  std::vector<std::string> out;
  if (source.keep_history() && destination.keep_history()) {
    // The history, and which revision each object's current one is: a database keeps that
    // apart (current_object), and a copy whose pointers are wrong reads old states.
    out = compare_history(*src, *dst, limit, Blobs{source_blobs, destination_blobs}, stop, until);
    if (out.size() < limit) {
      for (auto& d : compare_current(*src, *dst, limit - out.size(), Blobs{}, stop, until,
                                     source_moved, true)) {
        out.push_back("current revision of " + d);
      }
    }
  } else {
    out = compare_current(*src, *dst, limit, Blobs{source_blobs, destination_blobs}, stop, until,
                          source_moved);
  }
  // Asked to stop: what ran may have ended early (a stop right after the end counts too).
  if (complete) *complete = !stopped(stop);
  return out;
}

bool is_blob_record(std::string_view record) {
  // Cheap first: the class pickle comes first and is short, and almost no record names
  // ZODB.blob in its first bytes. Then, as ZODB's is_blob_record does, the class pickle
  // itself must name the class: a state that merely references a blob is no blob record.
  if (record.substr(0, 64).find("ZODB.blob") == std::string_view::npos) return false;
  try {
    return record_class_name(record) == "ZODB.blob.Blob";
  } catch (const PickleError&) {
    return false;  // as ZODB: a class pickle that cannot be read names no blob
  }
}

}  // namespace relstore
