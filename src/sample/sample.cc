#include "relstore/sample.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "relstore/errors.h"
#include "relstore/timestamp.h"
#include "sample/records.h"

namespace relstore {
namespace {

using sample::Child;
using sample::ClassName;
using sample::DateTime;
using sample::Document;

// splitmix64: the same sequence with every compiler and standard library, which
// std::uniform_int_distribution does not promise.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi]; the modulo bias is irrelevant for sample data.
  uint64_t between(uint64_t lo, uint64_t hi) { return lo + next() % (hi - lo + 1); }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  bool chance(double p) { return unit() < p; }
  template <class T, size_t N>
  const T& pick(const T (&items)[N]) {
    return items[next() % N];
  }

 private:
  uint64_t s_;
};

constexpr const char* kWords[] = {
    "storage", "object",   "database",  "transaction", "record",    "commit",   "snapshot",
    "history", "conflict", "pickle",    "folder",      "document",  "index",    "query",
    "server",  "client",   "cache",     "network",     "replica",   "backup",   "restore",
    "version", "schema",   "migration", "report",      "meeting",   "project",  "budget",
    "review",  "release",  "quarter",   "customer",    "the",       "a",        "of",
    "and",     "to",       "in",        "for",         "with",      "on",       "is",
    "was",     "will",     "be",        "quickly",     "carefully", "new",      "old",
    "large",   "small",    "final",     "draft",       "public",    "internal", "weekly",
    "annual",  "notes",    "summary",   "plan",        "agenda",    "update",   "status"};
constexpr const char* kRareWords[] = {"café", "Zürich", "naïve", "résumé", "東京", "Ωmega"};
constexpr const char* kTags[] = {"news",  "internal", "draft",  "archive", "featured",
                                 "howto", "faq",      "policy", "minutes", "release"};
constexpr const char* kUsers[] = {"/ admin", "/ editor", "/ alice", "/ bob", ""};

DateTime to_datetime(double unix_seconds) {
  const auto whole = static_cast<time_t>(unix_seconds);
  struct tm tm {};
  gmtime_r(&whole, &tm);
  const int micro = static_cast<int>((unix_seconds - static_cast<double>(whole)) * 1e6);
  return {tm.tm_year + 1900,           tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
          std::clamp(micro, 0, 999999)};
}

std::string words(Rng& r, uint64_t n, bool capitalize) {
  std::string out;
  for (uint64_t i = 0; i < n; ++i) {
    if (i) out += ' ';
    std::string w = r.chance(0.02) ? r.pick(kRareWords) : r.pick(kWords);
    if (capitalize && !w.empty() && w[0] >= 'a' && w[0] <= 'z') w[0] = static_cast<char>(w[0] - 32);
    out += w;
  }
  return out;
}

std::string numbered(const char* prefix, uint64_t n, int width) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s-%0*llu", prefix, width, static_cast<unsigned long long>(n));
  return buf;
}

struct Container {
  Oid oid;
  ClassName cls;
  std::string path;
  size_t parent;      // index into the container list; the root is its own parent
  uint64_t capacity;  // children it takes before the sample opens a new one
  std::vector<Child> children;
};

// What the sample keeps per document to rewrite it later; the text is regenerated.
struct DocState {
  Oid oid;
  uint32_t folder;
  uint32_t edits = 0;
  double created;
  uint64_t content_seed;
};

class SampleWriter {
 public:
  SampleWriter(StorageInstance& dst, const SampleOptions& o) : dst_(dst), o_(o), rng_(o.seed) {
    const Tid first = o.start_tid.value_or(TimeStamp(2024, 1, 1, 0, 0, 0).tid());
    now_ = TimeStamp(first).unix_time();
    next_tid_ = first;
  }

  SampleStats run() {
    if (!dst_.last_transaction().is_zero()) {
      throw StorageError(
          "relstore sample writes into an empty storage; this one already has "
          "transactions up to " +
          dst_.last_transaction().hex());
    }
    if (o_.objects == 0) return stats_;
    try {
      containers_.push_back({new_oid(), sample::kPersistentMapping, "", 0, UINT64_MAX, {}});
      dirty(0);
      commit("", "initial database creation", "");
      while (stats_.objects < o_.objects) {
        if (docs_.size() >= 10 && rng_.chance(0.15)) {
          edit_documents();
        } else {
          add_documents();
        }
      }
    } catch (const std::exception& e) {
      if (stats_.transactions == 0) throw;
      // What was committed stays, and looks like a whole (smaller) sample to anyone who
      // opens it: say so, and what to do.
      throw StorageError(std::string(e.what()) + "; the storage now holds an incomplete sample (" +
                         std::to_string(stats_.transactions) +
                         " transactions): delete it before writing a sample again");
    }
    return stats_;
  }

 private:
  Oid new_oid() {
    ++stats_.objects;
    return Oid(next_oid_++);
  }
  bool room() const { return stats_.objects < o_.objects; }
  void dirty(size_t container) {
    if (std::find(dirty_.begin(), dirty_.end(), container) == dirty_.end()) {
      dirty_.push_back(container);
    }
  }

  size_t add_container(size_t parent, const char* prefix, uint64_t number, ClassName cls,
                       uint64_t capacity) {
    Container& p = containers_[parent];
    const std::string name = numbered(prefix, number, 4);
    Container c{new_oid(), cls, p.path + "/" + name, parent, capacity, {}};
    p.children.push_back({name, c.oid, cls});
    containers_.push_back(std::move(c));
    dirty(parent);
    dirty(containers_.size() - 1);
    return containers_.size() - 1;
  }

  // A folder with room for another document, creating a section and a folder as needed;
  // none when the object budget ran out first.
  std::optional<size_t> folder_with_room() {
    if (leaf_ && containers_[*leaf_].children.size() < containers_[*leaf_].capacity) return leaf_;
    if (!section_ || containers_[*section_].children.size() >= containers_[*section_].capacity) {
      if (!room()) return std::nullopt;
      section_ = add_container(0, "section", ++sections_, sample::kPersistentMapping,
                               rng_.between(20, 60));
    }
    if (!room()) return std::nullopt;
    const ClassName cls = rng_.chance(0.5) ? sample::kOOBTree : sample::kPersistentMapping;
    leaf_ = add_container(*section_, "folder", ++folders_, cls, rng_.between(10, 100));
    return leaf_;
  }

  Document document(const DocState& d) const {
    Rng r(d.content_seed + d.edits * 0x9E3779B97F4A7C15ULL);
    const Container& folder = containers_[d.folder];
    Document doc;
    doc.title = words(r, r.between(2, 6), true);
    doc.text = words(r, r.between(10, 100), false) + ".";
    doc.created = to_datetime(d.created);
    doc.modified = to_datetime(now_);
    for (uint64_t n = r.between(0, 4); n > 0; --n) doc.tags.push_back(r.pick(kTags));
    doc.tags_as_tuple = r.chance(0.3);
    doc.views = static_cast<int64_t>(d.edits * 7 + r.between(0, r.chance(0.1) ? 100000 : 200));
    doc.rating = r.unit() * 5;
    doc.parent = folder.oid;
    doc.parent_class = folder.cls;
    return doc;
  }

  void add_documents() {
    const uint64_t budget = rng_.between(1, 50);
    std::optional<size_t> folder = folder_with_room();
    // Up to three containers change with the documents, so a transaction stays <= 50.
    const uint64_t want = budget > 3 ? budget - 3 : 1;
    uint64_t added = 0;
    while (folder && added < want && room()) {
      Container& f = containers_[*folder];
      if (f.children.size() >= f.capacity) break;
      DocState d{new_oid(), static_cast<uint32_t>(*folder), 0, now_, rng_.next()};
      f.children.push_back({numbered("doc", docs_.size() + 1, 8), d.oid, sample::kDocument});
      records_.emplace_back(d.oid, sample::document_record(document(d)));
      docs_.push_back(d);
      ++added;
    }
    if (folder) dirty(*folder);
    const std::string where = folder ? containers_[*folder].path : "/";
    commit(
        rng_.pick(kUsers),
        "Added " + std::to_string(added) + " document" + (added == 1 ? "" : "s") + " to " + where,
        rng_.chance(0.3) ? sample::extension_bytes("relstore sample", static_cast<int64_t>(added))
                         : Bytes());
  }

  void edit_documents() {
    const uint64_t n = rng_.between(1, std::min<uint64_t>(20, docs_.size()));
    std::vector<size_t> picked;
    for (uint64_t i = 0; i < n; ++i) {
      const size_t k = rng_.next() % docs_.size();
      if (std::find(picked.begin(), picked.end(), k) == picked.end()) picked.push_back(k);
    }
    for (size_t k : picked) {
      DocState& d = docs_[k];
      ++d.edits;
      records_.emplace_back(d.oid, sample::document_record(document(d)));
    }
    commit(
        rng_.pick(kUsers),
        "Edited " + std::to_string(picked.size()) + " document" + (picked.size() == 1 ? "" : "s"),
        Bytes());
  }

  Bytes container_record(const Container& c) const {
    if (std::string_view(c.cls.name) == sample::kOOBTree.name) {
      std::vector<Child> sorted = c.children;
      std::sort(sorted.begin(), sorted.end(),
                [](const Child& a, const Child& b) { return a.name < b.name; });
      return sample::btree_record(sorted);
    }
    return sample::mapping_record(c.children);
  }

  void commit(const std::string& user, const std::string& description, const Bytes& extension) {
    for (size_t c : dirty_)
      records_.emplace_back(containers_[c].oid, container_record(containers_[c]));
    dirty_.clear();
    const Tid tid = next_tid_;
    TransactionMetaData meta{user, description, extension};
    dst_.tpc_begin(meta, tid, ' ');
    try {
      for (const auto& [oid, data] : records_) {
        dst_.restore(oid, tid, data, meta);
        stats_.bytes += data.size();
      }
      dst_.tpc_vote(meta);
      dst_.tpc_finish(meta, {});
    } catch (...) {
      dst_.tpc_abort(meta);
      throw;
    }
    stats_.records += records_.size();
    ++stats_.transactions;
    records_.clear();
    if (o_.progress) o_.progress(stats_);
    // Seconds to minutes between commits, as people edit.
    now_ += static_cast<double>(rng_.between(1, 300)) + rng_.unit();
    next_tid_ = TimeStamp::from_unix(now_).later_than(TimeStamp(tid)).tid();
  }

  StorageInstance& dst_;
  const SampleOptions& o_;
  Rng rng_;
  double now_;
  Tid next_tid_;
  uint64_t next_oid_ = 0;
  uint64_t sections_ = 0, folders_ = 0;
  std::vector<Container> containers_;
  std::optional<size_t> section_, leaf_;
  std::vector<DocState> docs_;
  std::vector<size_t> dirty_;
  std::vector<std::pair<Oid, Bytes>> records_;
  SampleStats stats_;
};

}  // namespace

SampleStats write_sample(StorageInstance& dst, const SampleOptions& options) {
  return SampleWriter(dst, options).run();
}

}  // namespace relstore
