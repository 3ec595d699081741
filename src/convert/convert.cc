// The conversion driver: opens both ends, decides what to copy and how, and reports.
#include "relstore/convert.h"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <unordered_map>

#include "backend/oid_order.h"
#include "backend/registry.h"
#include "convert/scratch_dir.h"
#include "filestorage/format.h"
#include "option_values.h"
#include "paths.h"
#include "relstore/blob_dir.h"
#include "relstore/errors.h"
#include "relstore/filestorage.h"
#include "relstore/json_mirror.h"
#include "storage/file_uri.h"

namespace relstore {
namespace {

using Clock = std::chrono::steady_clock;

// `blob_cache`: where a database's blobs are read into (its blob_dir), unless the URI
// names one.
std::unique_ptr<Storage> open_source(const StorageUri& uri, const std::string& blob_cache = "") {
  StorageOptions options = uri.options();
  options.read_only = true;
  options.create = false;
  options.cache_mb = 0;  // every record is read once
  if (uri.scheme != Scheme::file && options.blob_dir.empty()) options.blob_dir = blob_cache;
  return open_storage(uri, options);
}

// What the database at `uri` says it is (Storage::identity), from a read-only handle;
// empty when there is none to open (it cannot be the source, which exists).
std::string existing_identity(const StorageUri& uri) {
  // Files and directories are named by their path: no need to open them (opening a large
  // Data.fs reads all of it to build its index).
  if (uri.scheme == Scheme::file || uri.scheme == Scheme::sqlite) {
    return path_identity(scheme_name(uri.scheme), uri.database);
  }
  try {
    return open_source(uri)->identity();
  } catch (const StorageError&) {
    return "";
  }
}

// A file's first four bytes (fewer when it is shorter); none for a missing or empty file.
std::optional<std::string> file_magic(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string magic(4, '\0');
  in.read(magic.data(), 4);
  magic.resize(static_cast<size_t>(in.gcount()));
  if (magic.empty()) return std::nullopt;
  return magic;
}

// The destination, or null when a dry run finds none (it would be created). `magic`: what
// a new Data.fs starts with.
// `blob_cache`: a database's blob_dir, unless the URI names one.
std::unique_ptr<Storage> open_destination(const StorageUri& uri, bool dry_run,
                                          const std::string& magic = "FS30",
                                          const std::string& blob_cache = "") {
  StorageOptions options = uri.options();
  options.cache_mb = 0;
  if (uri.scheme != Scheme::file && options.blob_dir.empty()) options.blob_dir = blob_cache;
  if (uri.scheme == Scheme::file) {
    check_file_uri_options(options);
    if (options.read_only) {
      throw ConfigError("the destination " + uri.redacted() +
                        " is marked read_only; a conversion writes to it");
    }
    FileStorageOptions fo;
    std::error_code ec;
    if (!options.create && !std::filesystem::exists(uri.database, ec)) {
      throw NoSchemaError("the destination " + uri.redacted() +
                          " does not exist, and create=false does not create it");
    }
    if (dry_run) {
      if (!std::filesystem::exists(uri.database, ec)) return nullptr;
      return open_file_storage(uri.database, fo);
    }
    fo.read_only = false;
    fo.create = options.create;
    fo.create_magic = magic;
    // One fsync when the conversion closes the file, unless fsync=1 asks for one a commit.
    fo.fsync_each_commit = driver_flag(options, "fsync", false);
    fo.commit_lock_timeout = options.commit_lock_timeout;
    return open_file_storage(uri.database, fo);
  }
  if (dry_run) {
    options.read_only = true;
    options.create = false;
    try {
      return open_storage(uri, options);
    } catch (const NoSchemaError&) {
      // A real run would create it. Anything else (the other mode, a foreign database) is
      // an error a dry run must report too.
      return nullptr;
    }
  }
  return open_storage(uri, options);
}

// The OIDs of a storage's current objects in order, from one snapshot. Databases are read
// a page of records a round trip, through their adapter's load connection; a Data.fs
// through record_iternext. `adapter`: one already open on the database, if any.
class OidWalk {
 public:
  OidWalk(Storage& storage, const StorageUri& uri, backend::Adapter* adapter = nullptr) {
    if (uri.scheme == Scheme::file) {
      instance_ = storage.new_instance();
      instance_->poll_invalidations();
      return;
    }
    if (!adapter) {
      StorageOptions options = uri.options();
      options.read_only = true;
      options.create = false;
      own_adapter_ = backend::open_adapter(uri, options);
      adapter = own_adapter_.get();
    }
    load_ = adapter->open_load();
    load_->begin_snapshot(std::nullopt);
  }
  ~OidWalk() {
    if (load_) load_->end_snapshot();
  }
  OidWalk(const OidWalk&) = delete;
  OidWalk& operator=(const OidWalk&) = delete;

  std::optional<Oid> next() {
    if (instance_) {
      if (done_) return std::nullopt;
      auto r = instance_->record_iternext(from_);
      if (!r) return std::nullopt;
      from_ = r->next;
      done_ = !r->next;
      return r->oid;
    }
    if (page_at_ == page_.size()) {
      if (done_) return std::nullopt;
      page_ = backend::current_records_in_oid_order(*load_, from_.value_or(Oid(0)), kPage);
      page_at_ = 0;
      done_ = page_.size() < kPage || page_.back().first.value() == ~uint64_t{0};
      if (!done_) from_ = Oid(page_.back().first.value() + 1);
      if (page_.empty()) return std::nullopt;
    }
    return page_[page_at_++].first;
  }

 private:
  static constexpr size_t kPage = 1000;
  std::unique_ptr<StorageInstance> instance_;
  std::unique_ptr<backend::Adapter> own_adapter_;
  std::unique_ptr<backend::LoadConnection> load_;
  std::vector<std::pair<Oid, backend::StateRow>> page_;
  size_t page_at_ = 0;
  std::optional<Oid> from_;
  bool done_ = false;
};

class Converter {
 public:
  // `bulk`: the destination's adapter when it loads in batches (null: one restore per
  // source transaction, as into a Data.fs).
  // `scratch`: where blob contents wait on their way out of or into a database.
  Converter(const ConvertOptions& o, Storage& src, const StorageUri& src_uri, Storage* dst,
            const StorageUri& dst_uri, std::unique_ptr<backend::Adapter> bulk,
            const ScratchDir& scratch)
      : o_(o),
        src_(src),
        src_uri_(src_uri),
        dst_(dst),
        dst_uri_(dst_uri),
        bulk_adapter_(std::move(bulk)),
        scratch_(scratch) {
    if (!o.source_blob_dir.empty()) src_blobs_ = BlobDir::open(o.source_blob_dir);
  }

  // Where the destination stands before the copy: its last TID (zero when empty or just
  // cleared); each batch checks it is still so.
  void expect_destination_at(Tid last) { expected_last_ = last; }

  void run(std::optional<Tid> start, ConvertReport& report) {
    if (!o_.destination_blob_dir.empty() && !o_.dry_run && dst_uri_.scheme == Scheme::file) {
      dst_blobs_ = BlobDir::create(o_.destination_blob_dir);
      // This process holds the destination's lock: what a killed conversion left in tmp/
      // (a partial copy, possibly gigabytes) is nobody's.
      dst_blobs_->remove_stale_temporaries();
    }
    report.done.total_transactions = source_info().transactions;
    const bool bulk = bulk_adapter_ != nullptr;
    keep_history_ = dst_ ? dst_->keep_history() : true;
    report.current_only = dst_ ? !keep_history_ : dst_uri_.options().history == HistoryMode::free;
    auto src_inst = src_.new_instance();
    auto dst_inst = dst_ && !o_.dry_run && !bulk ? dst_->new_instance() : nullptr;
    auto it = src_inst->iterator(start, std::nullopt);
    TransactionRecord txn;
    t0_ = Clock::now();
    while (it->next(txn)) {
      if (o_.stop && o_.stop->load()) {
        report.interrupted = true;  // with `txn` not copied: a resume starts there
        break;
      }
      check_blobs(txn, report);
      if (!report.first_tid) report.first_tid = txn.tid;
      report.last_tid = txn.tid;
      if (o_.dry_run) {
        count(txn, report);
      } else if (bulk) {
        add_to_batch(txn, report);
      } else {
        copy_transaction(*dst_inst, txn, report);
      }
    }
    if (bulk) flush_batch(report);
    // Removals belong after the whole copy (expect_deletions); a resume does them.
    if (deleted_at_ && !report.interrupted) remove_deleted(report);
    if (bulk) bulk_adapter_->bulk_finish();
    report.done.seconds = seconds();
  }

  // The source's figures, read once (their counts scan tables).
  const StorageInfo& source_info() {
    if (!source_info_) source_info_ = src_.info();
    return *source_info_;
  }

  // --incremental from a history-free source that deleted objects (at `deleted_at` or
  // before) that the destination may still have. Such a source keeps no
  // trace of what it deleted: the objects the destination has and the source lacks are
  // found by walking both. A history-preserving destination cannot record them — the
  // source cannot say when each went — and is refused here, before anything is written;
  // a history-free one has them removed after the copy (run), at `deleted_at`. After,
  // not before: the removal moves the destination's last TID to `deleted_at`, and a run
  // interrupted between the two would resume after transactions it never copied.
  void expect_deletions(Tid deleted_at) {
    if (!dst_->keep_history()) {
      deleted_at_ = deleted_at;
      return;
    }
    const std::vector<Oid> gone = find_deleted();
    if (gone.empty()) return;
    throw StorageError("--incremental: the destination " + dst_uri_.redacted() + " has " +
                       describe_deleted(gone, deleted_at) +
                       "; the source cannot say when each went, so a history-preserving "
                       "copy cannot record it. Nothing was changed; --clear copies the "
                       "source again");
  }

 private:
  // The destination's objects that the source lacks, in OID order.
  std::vector<Oid> find_deleted() {
    OidWalk src(src_, src_uri_);
    OidWalk dst(*dst_, dst_uri_, bulk_adapter_.get());
    std::vector<Oid> gone;
    std::optional<Oid> a = src.next(), b = dst.next();
    while (b) {
      if (a && *a < *b) {
        a = src.next();
        continue;
      }
      if (!a || *b < *a) gone.push_back(*b);
      b = dst.next();
    }
    return gone;
  }

  static std::string describe_deleted(const std::vector<Oid>& gone, Tid deleted_at) {
    return std::to_string(gone.size()) + " objects (oid " + gone.front().hex() +
           " first) that the history-free source no longer has (its last deletion: " +
           deleted_at.hex() + ")";
  }

  // The history-free half of expect_deletions, once the copy is done.
  void remove_deleted(ConvertReport& report) {
    const std::vector<Oid> gone = find_deleted();
    if (gone.empty()) return;
    report.deletions = gone.size();
    if (o_.on_log) o_.on_log("removing " + describe_deleted(gone, *deleted_at_));
    if (o_.dry_run) return;
    std::vector<backend::BulkRecord> records;
    for (Oid oid : gone) records.push_back({oid, *deleted_at_, std::nullopt});
    if (bulk_adapter_) {
      // The walk above can take long: whatever committed meanwhile (a new object the
      // walk took for deleted) must stop the removal.
      begin_load();
      bulk_adapter_->bulk_apply_current(records, expected_last_);
      after_load(Tid(), *deleted_at_);
      return;
    }
    TransactionMetaData meta{"", "objects deleted in the history-free source", ""};
    auto dst = dst_->new_instance();
    dst->tpc_begin(meta, *deleted_at_);
    for (const auto& r : records) dst->restore(r.oid, r.tid, std::nullopt, meta);
    dst->tpc_vote(meta);
    dst->tpc_finish(meta);
  }

  double seconds() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }

  void tick(ConvertReport& report) {
    report.done.seconds = seconds();
    if (o_.on_progress) o_.on_progress(report.done);
  }

  void count(const TransactionRecord& txn, ConvertReport& report) {
    if (o_.dry_run) {
      copy_blobs(txn.tid, report);  // counts what would be copied
      forget_scratch_blobs(txn.tid);
    }
    ++report.done.transactions;
    for (const auto& r : txn.records) {
      ++report.done.records;
      if (r.data) report.done.bytes += r.data->size();
    }
    tick(report);
  }

  // Decides, before anything of `txn` is written, what happens to its blobs.
  void check_blobs(const TransactionRecord& txn, ConvertReport& report) {
    pending_blobs_.clear();
    for (const auto& r : txn.records) {
      if (!r.data || !is_blob_record(*r.data)) continue;
      const std::string source_file = source_blob(r.oid, txn.tid);
      // A database keeps blob contents in its blob_chunk table; a Data.fs beside itself.
      const bool destination_holds_blobs =
          dst_uri_.scheme != Scheme::file || !o_.destination_blob_dir.empty();
      if (!source_file.empty() && destination_holds_blobs) {
        pending_blobs_[r.oid] = source_file;
        continue;
      }
      if (o_.skip_blobs) {
        ++report.blobs_skipped;
        continue;
      }
      std::string why;
      if (source_file.empty()) {
        if (src_blobs_) {
          why = "its blob file " + src_blobs_->blob_path(r.oid, txn.tid) +
                " is not in the source blob directory (read as the " +
                layout_name(src_blobs_->layout()) + " layout" +
                (src_blobs_->layout_guessed() ? ", guessed: it has no .layout file" : "") + ")";
        } else if (src_uri_.scheme != Scheme::file) {
          why =
              "the source database's blob_chunk table has no content for it (a database "
              "whose blobs are in a shared blob directory needs --source-blob-dir)";
        } else {
          why = "the source has no blob directory to read it from (--source-blob-dir)";
        }
      } else {
        why =
            "the destination cannot hold blob contents (give --destination-blob-dir with a "
            "file: destination)";
      }
      throw StorageError("blob record oid " + r.oid.hex() + " in transaction " + txn.tid.hex() +
                         ": " + why + " (--skip-blobs copies records without blob contents)");
    }
  }

  // The source's blob file of revision `tid` of `oid`; "" when there is none. A
  // database's is read out of its blob_chunk table into the scratch directory.
  std::string source_blob(Oid oid, Tid tid) {
    if (src_blobs_) return src_blobs_->has_blob(oid, tid) ? src_blobs_->blob_path(oid, tid) : "";
    if (src_uri_.scheme == Scheme::file) return "";
    if (!src_blob_reader_) src_blob_reader_ = src_.new_instance();
    try {
      return src_blob_reader_->load_blob(oid, tid);
    } catch (const POSKeyError&) {
      return "";
    }
  }

  // Into a database: restore_blob takes the file. One this run read into its scratch
  // directory (a database source's blob) is handed over as it is; another (a source blob
  // directory's, the user's) is copied first.
  std::string upload_file(const std::string& file) {
    if (file.starts_with(scratch_.sub(""))) return file;
    const std::string copy = scratch_.sub("upload");
    std::error_code ec;
    std::filesystem::copy_file(file, copy, std::filesystem::copy_options::overwrite_existing, ec);
    if (ec)
      throw StorageError("cannot copy blob file " + file + " to " + copy + ": " + ec.message());
    return copy;
  }

  // After a transaction's blobs are in: the files this run wrote into the scratch
  // directory go, so that it holds one transaction's blobs at most.
  void forget_scratch_blobs(Tid tid) {
    std::error_code ec;
    for (const auto& [oid, file] : pending_blobs_) {
      if (file.starts_with(scratch_.sub(""))) std::filesystem::remove(file, ec);
      if (dst_ && o_.destination_blob_dir.empty() && dst_uri_.scheme != Scheme::file) {
        std::filesystem::remove(dst_blob_cache_path(oid, tid), ec);
      }
    }
  }

  std::string dst_blob_cache_path(Oid oid, Tid tid) const {
    return BlobDir::open(scratch_.sub("destination")).blob_path(oid, tid);
  }

  void copy_blobs(Tid tid, ConvertReport& report) {
    for (const auto& [oid, file] : pending_blobs_) {
      if (!o_.dry_run && dst_blobs_) dst_blobs_->copy_blob(oid, tid, file);
      ++report.blobs_copied;
    }
  }

  void copy_transaction(StorageInstance& dst, const TransactionRecord& txn, ConvertReport& report) {
    const TransactionMetaData meta{txn.user, txn.description, txn.extension};
    // Blob files first: a transaction that exists refers to blobs that exist.
    copy_blobs(txn.tid, report);
    bool begun = false;
    try {
      dst.tpc_begin(meta, txn.tid, txn.status);
      begun = true;
      for (const DataRecord& r : txn.records) {
        auto blob = pending_blobs_.find(r.oid);
        if (blob != pending_blobs_.end() && dst_uri_.scheme != Scheme::file) {
          dst.restore_blob(r.oid, txn.tid, *r.data, upload_file(blob->second), meta);
        } else {
          dst.restore(r.oid, txn.tid, r.data, meta);
        }
      }
      dst.tpc_vote(meta);
      dst.tpc_finish(meta);
    } catch (const std::exception& e) {
      if (begun) dst.tpc_abort(meta);
      throw StorageError("source transaction " + txn.tid.hex() + ": " + e.what());
    }
    forget_scratch_blobs(txn.tid);
    count(txn, report);
  }

  // A transaction with blobs, into a database loaded in batches: committed on its own,
  // with its blobs (the bulk loads carry none), after the batch before it.
  void copy_with_blobs(const TransactionRecord& txn, ConvertReport& report) {
    flush_batch(report);
    begin_load();
    if (!blob_writer_) blob_writer_ = dst_->new_instance();
    copy_transaction(*blob_writer_, txn, report);
    after_load(txn.tid, txn.tid);
  }

  void add_to_batch(const TransactionRecord& txn, ConvertReport& report) {
    if (!pending_blobs_.empty()) {
      copy_with_blobs(txn, report);
      return;
    }
    if (keep_history_) {
      history_batch_.push_back(txn);
    } else {
      for (const DataRecord& r : txn.records) {
        // Later revisions of an oid replace earlier ones within a batch.
        auto [it, fresh] = batch_index_.try_emplace(r.oid, current_batch_.size());
        if (fresh) {
          current_batch_.push_back({r.oid, txn.tid, r.data});
        } else {
          current_batch_[it->second] = {r.oid, txn.tid, r.data};
        }
      }
    }
    batched_.transactions += 1;
    for (const auto& r : txn.records) {
      ++batched_.records;
      if (r.data) batched_.bytes += r.data->size();
    }
    if (batched_.records >= o_.batch_records) flush_batch(report);
  }

  void flush_batch(ConvertReport& report) {
    if (batched_.transactions == 0) return;
    begin_load();
    // What the destination's last TID may be once the batch is in: at least the newest
    // TID the batch stores, at most the newest it writes (or where it stood).
    Tid low, high;
    if (keep_history_) {
      low = high = history_batch_.back().tid;
      bulk_adapter_->bulk_restore(history_batch_, expected_last_);
    } else {
      for (const auto& r : current_batch_) {
        if (r.state) low = std::max(low, r.tid);
        high = std::max(high, r.tid);
      }
      bulk_adapter_->bulk_apply_current(current_batch_, expected_last_);
    }
    after_load(low, high);
    report.done.transactions += batched_.transactions;
    report.done.records += batched_.records;
    report.done.bytes += batched_.bytes;
    history_batch_.clear();
    current_batch_.clear();
    batch_index_.clear();
    batched_ = {};
    tick(report);
  }

  // Before each write of the load: takes the bulk-load lock, held from the first write
  // to the end (no other conversion can write meanwhile), and checks the destination is
  // still where this conversion found or left it.
  void begin_load() {
    if (!began_) {
      bulk_adapter_->bulk_begin();
      began_ = true;
    }
    check_destination_unchanged();
  }

  // After a write of the load that leaves the destination's last TID in [low, high]
  // (besides where it stood): reads where it stands now. Outside that range, another
  // writer committed or emptied it (a zap) between the write and this read.
  void after_load(Tid low, Tid high) {
    const Tid now = destination_last_tid();
    if (now < low || now > std::max(high, expected_last_.value_or(Tid()))) {
      throw foreign_writer(now, "this conversion had just written up to " + high.hex());
    }
    expected_last_ = now;
  }

  // The destination's last transaction as a new snapshot sees it.
  Tid destination_last_tid() { return dst_->new_instance()->last_transaction(); }

  // Between batches: nothing but this load may have written to the destination. Another
  // writer's commits would be overwritten by the load or interleaved with it (older TIDs
  // after newer ones), and the copy would pass for a faithful one. Each batch checks the
  // same again under the destination's commit lock before it writes (the dialects'
  // bulk calls take expected_last_), so a commit in the moment between this check and
  // the batch stops the batch too.
  void check_destination_unchanged() {
    if (!expected_last_) return;
    const Tid now = destination_last_tid();
    if (now == *expected_last_) return;
    throw foreign_writer(now, "this conversion expected it at " + expected_last_->hex());
  }

  StorageError foreign_writer(Tid now, const std::string& expected) const {
    return StorageError("another process wrote to the destination " + dst_uri_.redacted() +
                        " during the conversion (its last transaction is " + now.hex() + ", " +
                        expected +
                        "): nothing more was copied; a conversion must be the only writer of "
                        "its destination");
  }

  const ConvertOptions& o_;
  Storage& src_;
  StorageUri src_uri_;
  Storage* dst_;
  StorageUri dst_uri_;
  std::optional<BlobDir> src_blobs_, dst_blobs_;
  std::map<Oid, std::string> pending_blobs_;  // the transaction's blobs: oid -> source file
  std::unique_ptr<backend::Adapter> bulk_adapter_;
  const ScratchDir& scratch_;
  std::unique_ptr<StorageInstance> src_blob_reader_;  // a database source's blobs
  std::unique_ptr<StorageInstance> blob_writer_;      // restores transactions with blobs
  bool keep_history_ = true;
  std::optional<Tid> deleted_at_;     // the source's deletion record, when removals are due
  bool began_ = false;                // the bulk-load lock is held
  std::optional<Tid> expected_last_;  // where the destination should stand
  std::optional<StorageInfo> source_info_;
  std::vector<TransactionRecord> history_batch_;
  std::vector<backend::BulkRecord> current_batch_;
  std::unordered_map<Oid, size_t> batch_index_;
  ConvertProgress batched_;
  Clock::time_point t0_;
};

// Bulk loads write rows directly, past the in-commit JSON mirror: bring it up to date.
void catch_up_mirror(const StorageUri& uri, const std::atomic<bool>* stop, ConvertReport& report) {
  if (uri.scheme == Scheme::file) return;
  try {
    if (mirror_status(uri.text()).mode != MirrorMode::in_commit) return;
  } catch (const SchemaError&) {
    return;  // no mirror tables, or a dialect without the mirror
  }
  FollowOptions once;
  once.once = true;
  once.stop = stop;  // its progress is recorded: a resume continues from there
  report.mirror_rows = mirror_follow(uri.text(), once).decoded;
}

StorageError not_empty(const StorageUri& dst_uri, const StorageInfo& info) {
  const std::string unfinished = info.unfinished_conversion
                                     ? "; it holds an unfinished conversion from " +
                                           info.unfinished_conversion->source + " (started " +
                                           info.unfinished_conversion->started_at + ")"
                                     : "";
  return StorageError("the destination " + dst_uri.redacted() + " is not empty (" +
                      std::to_string(info.objects) + " objects, " +
                      std::to_string(info.transactions) + " transactions" + unfinished +
                      "): nothing was changed. Use --incremental to continue "
                      "after its last transaction or --clear to replace its content.");
}

// Now, in UTC, as the note of an unfinished conversion gives it.
std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// What tells the source's transaction `source` apart from `copied`, the destination's
// transaction of the same TID, or none when `copied` may be its copy. A pack of the source
// since may have marked it packed and removed records the copy still has; a history-free
// copy keeps only the records that are not deletions.
std::optional<std::string> differs_from_copy(const TransactionRecord& source,
                                             const TransactionRecord& copied,
                                             bool copy_keeps_history) {
  if (copy_keeps_history) {
    if (source.user != copied.user) return "user differs";
    if (source.description != copied.description) return "description differs";
    if (source.extension != copied.extension) return "extension bytes differ";
  }
  std::map<Oid, const std::optional<Bytes>*> in_copy;
  for (const DataRecord& r : copied.records) in_copy[r.oid] = &r.data;
  for (const DataRecord& r : source.records) {
    if (!copy_keeps_history && !r.data) continue;
    const auto at = in_copy.find(r.oid);
    if (at == in_copy.end()) return "oid " + r.oid.hex() + " is not in the copy";
    if (*at->second != r.data) return "oid " + r.oid.hex() + ": data differs";
    in_copy.erase(at);
  }
  if (!in_copy.empty() && source.status != 'p') {
    return "oid " + in_copy.begin()->first.hex() + " is not in the source";
  }
  return std::nullopt;
}

// --incremental continues a copy of this source; a destination that is not one would get
// the source's later transactions on top of unrelated data. A history-preserving source
// still has the transaction the destination ends with; a history-free one derives its
// transactions from current rows (a later change hides an older TID), so only "not
// ahead of the source" can be checked there.
void check_resumable(Storage& src, Storage& dst, Tid dst_last, const StorageUri& dst_uri,
                     std::optional<Tid> src_last_deletion) {
  auto inst = src.new_instance();
  inst->poll_invalidations();
  const Tid src_last = inst->last_transaction();  // not info(): its counts scan tables
  const std::string refuse = "--incremental: the destination " + dst_uri.redacted() +
                             " ends with transaction " + dst_last.hex() + ", ";
  const std::string advice =
      "; it is not a partial copy of this source, and nothing was changed (--clear copies "
      "the source again)";
  if (dst_last > src_last) {
    throw StorageError(refuse + "later than the source's last, " + src_last.hex() + advice);
  }
  if (!src.keep_history()) {
    // A history-free source has no transaction to find; the objects the destination's
    // last transaction wrote must be in it at that TID (or changed since, or deleted
    // after). Otherwise another writer made that transaction, and what the source did
    // before it and after the copy would be skipped.
    auto last = dst.new_instance()->iterator(dst_last, dst_last);
    TransactionRecord txn;
    if (!last->next(txn)) return;
    for (const DataRecord& r : txn.records) {
      if (!r.data) continue;
      std::optional<Tid> at;
      try {
        at = inst->load(r.oid).tid;
      } catch (const POSKeyError&) {
      }
      const bool deleted_since = !at && src_last_deletion && *src_last_deletion > dst_last;
      if ((at && *at >= dst_last) || deleted_since) continue;
      throw StorageError(refuse + "which wrote oid " + r.oid.hex() + ", " +
                         (at ? "at " + at->hex() + " in the source" : "absent from the source") +
                         advice);
    }
    return;
  }
  auto it = inst->iterator(dst_last, dst_last);
  TransactionRecord txn;
  if (!it->next(txn)) {
    throw StorageError(refuse +
                       "which the source does not have (packed away, or another "
                       "database)" +
                       advice);
  }
  // The same TID is not yet the same transaction: databases made the same way (relstore
  // sample, restores of one Data.fs) share TIDs. The destination's last transaction must
  // be the source's as it was copied, or as a pack left it (status 'p', superseded
  // revisions gone).
  TransactionRecord copied;
  if (!dst.new_instance()->iterator(dst_last, dst_last)->next(copied)) return;
  if (const auto why = differs_from_copy(txn, copied, dst.keep_history())) {
    throw StorageError(refuse + "which differs from the source's transaction of that TID (" + *why +
                       ")" + advice);
  }
}

// A conversion that starts the destination over must not find blob files in its blob
// directory: --clear empties the Data.fs only, and a file left there by another database
// with the same oid and TID would pass for the blob of a record whose own was skipped.
void refuse_blob_files_of_another(const ConvertOptions& o) {
  if (o.destination_blob_dir.empty() || o.dry_run) return;
  std::error_code ec;
  if (!std::filesystem::exists(o.destination_blob_dir, ec)) return;
  const auto found = BlobDir::open(o.destination_blob_dir).list(1);  // one tells enough
  if (found.empty()) return;
  throw ConfigError("the destination blob directory " + o.destination_blob_dir +
                    " holds blob files (" + found[0].path +
                    "), and this conversion starts the destination " +
                    (o.clear ? "over (--clear empties the Data.fs, not its blobs)" : "empty") +
                    ": remove them or give an empty directory (--incremental resumes an "
                    "interrupted conversion of the same source); nothing was changed");
}

// Throws `message` as the same kind of error as `e`: a usage error found once the copy
// began stays one (exit status 2) with what the copy left added to its message.
[[noreturn]] void rethrow_as(const std::exception& e, const std::string& message) {
  if (dynamic_cast<const ConfigError*>(&e)) throw ConfigError(message);
  throw StorageError(message);
}

// --verify: compares the source with the copy as the copy left it. A source that committed
// after the copy's last transaction is compared up to it, and the report says so.
// `source_at_start`: the source's last TID when the copy began. A history-free source's
// may be a deletion's, which no copied transaction carries; what the source had then was
// copied, so the comparison goes up to the later of the two.
// Blobs are compared wherever they are: in blob directories, or (read into the scratch
// directory) in a database's blob_chunk table.
void verify_copy(const ConvertOptions& o, Storage& src, const StorageUri& src_uri,
                 const StorageUri& dst_uri, const ScratchDir& scratch, ConvertReport& report,
                 Tid source_at_start) {
  auto reopened = open_source(dst_uri, scratch.sub("verify"));
  std::optional<BlobDir> src_dir, dst_dir;
  std::optional<BlobFiles> src_blobs, dst_blobs;
  std::unique_ptr<StorageInstance> src_reader, dst_reader;
  if (!o.source_blob_dir.empty()) {
    src_dir = BlobDir::open(o.source_blob_dir);
    src_blobs = blob_files(*src_dir);
  } else if (src_uri.scheme != Scheme::file) {
    src_reader = src.new_instance();
    src_blobs = blob_files(*src_reader);
  }
  if (dst_uri.scheme != Scheme::file) {
    dst_reader = reopened->new_instance();
    dst_blobs = blob_files(*dst_reader);
  } else if (!o.destination_blob_dir.empty()) {
    dst_dir = BlobDir::open(o.destination_blob_dir);
    dst_blobs = blob_files(*dst_dir);
  }
  std::optional<Tid> until = report.last_tid ? report.last_tid : report.started_after;
  if (!until || *until < source_at_start) until = source_at_start;
  bool complete = true;
  Tid source_last;
  report.differences =
      compare_storages(src, *reopened, 20, src_blobs ? &*src_blobs : nullptr,
                       dst_blobs ? &*dst_blobs : nullptr, o.stop, &complete, until, &source_last);
  if (until && source_last > *until) report.source_moved_to = source_last;
  report.verified = complete;
  report.interrupted_after_copy = !complete;
}

}  // namespace

ConvertReport convert(const ConvertOptions& o) {
  if (o.clear && o.incremental) throw ConfigError("--clear and --incremental exclude each other");
  const StorageUri src_uri = StorageUri::parse(o.source);
  const StorageUri dst_uri = StorageUri::parse(o.destination);
  if (!o.source_blob_dir.empty()) BlobDir::open(o.source_blob_dir);  // exists, has a layout
  const ScratchDir scratch;
  auto src = open_source(src_uri, o.source_blob_dir.empty() ? scratch.sub("source") : "");
  // The same database under two names (a path with "./" or a symbolic link, another host
  // name for the same server): --clear would empty the source. Asked of a read-only
  // handle, before the destination is opened for writing (which may already change a
  // database: adopt a RelStorage schema, remove a Data.fs index).
  const std::string src_identity = src->identity();
  if (const std::string dst_identity = existing_identity(dst_uri);
      !dst_identity.empty() && dst_identity == src_identity) {
    throw ConfigError("the source " + src_uri.redacted() + " and the destination " +
                      dst_uri.redacted() + " are the same database (" + dst_identity +
                      "): nothing was changed");
  }
  // A destination Data.fs's magic; none for a new or empty file, which gets one when opened.
  const std::optional<std::string> dst_magic =
      dst_uri.scheme == Scheme::file ? file_magic(dst_uri.database) : std::nullopt;
  // Not a Data.fs at all (a file named by mistake): --clear must not overwrite it.
  if (dst_magic && *dst_magic != fs::kMagicFS30 && *dst_magic != fs::kMagicFS21) {
    throw StorageError("the destination " + dst_uri.redacted() +
                       " is not a FileStorage (it does not start with FS30 or FS21): nothing "
                       "was changed");
  }
  // Opening a Data.fs for writing moves a damaged tail aside and removes its index, so a
  // refusal must come from a read-only look first.
  if (dst_magic && !o.clear && !o.incremental && !o.dry_run) {
    if (auto existing = open_destination(dst_uri, true)) {
      const StorageInfo info = existing->info();
      if (info.transactions != 0 || info.objects != 0) throw not_empty(dst_uri, info);
    }
  }
  // A Data.fs copied from a Data.fs keeps its magic: FS21 marks Python 2 pickles, which
  // ZODB on Python 3 must refuse to open rather than misread. Appending one kind to a file
  // of the other would mix them.
  std::string magic = "FS30";
  if (src_uri.scheme == Scheme::file) magic = src->info().schema_version;  // read when opened
  if (src_uri.scheme == Scheme::file && dst_magic && *dst_magic != magic) {
    throw StorageError("the source " + src_uri.redacted() + " is an " + magic +
                       " file and the destination " + dst_uri.redacted() + " an " + *dst_magic +
                       " one (" + (magic == "FS21" ? "Python 2" : "Python 3") +
                       " pickles into a file marked for the other): nothing was changed; "
                       "copy into a new file instead");
  }
  if (dst_uri.scheme == Scheme::file && !o.incremental) {
    // Before the destination is opened, which creates a missing Data.fs.
    std::error_code ec;
    const auto size = std::filesystem::file_size(dst_uri.database, ec);
    if (o.clear || ec || size <= 4) refuse_blob_files_of_another(o);
  }
  auto dst = open_destination(
      dst_uri, o.dry_run, magic,
      o.destination_blob_dir.empty() ? scratch.sub("destination") : o.destination_blob_dir);
  // Database destinations load in batches, each one database transaction; a Data.fs (or a
  // dialect without bulk loading) gets one restore per source transaction. Where the
  // destination stands is read only once no other bulk load is writing to it (a killed
  // conversion's last batch may still be committing on the server).
  std::unique_ptr<backend::Adapter> bulk;
  if (dst && !o.dry_run && dst_uri.scheme != Scheme::file) {
    bulk = backend::open_adapter(dst_uri, dst_uri.options());
    if (bulk->supports_bulk()) {
      if (!bulk->wait_for_bulk_loads(o.stop)) {
        ConvertReport stopped;  // before anything was read or written
        stopped.interrupted = true;
        return stopped;
      }
    } else {
      bulk.reset();
    }
  }

  // Checks the options that need both ends open (the source blob directory) before
  // --clear touches the destination: a usage error found after it would leave the
  // destination emptied with nothing copied.
  Converter converter(o, *src, src_uri, dst.get(), dst_uri, std::move(bulk), scratch);
  ConvertReport report;
  std::optional<Tid> start;
  if (dst) {
    const StorageInfo info = dst->info();
    const bool empty = info.transactions == 0 && info.objects == 0;
    converter.expect_destination_at(info.last_tid);
    if (!empty) {
      if (o.clear) {
        if (!o.dry_run) {
          dst->zap_all();
          converter.expect_destination_at(dst->new_instance()->last_transaction());
        }
        report.cleared = true;
      } else if (o.incremental) {
        check_resumable(*src, *dst, info.last_tid, dst_uri,
                        src->keep_history() ? std::nullopt : converter.source_info().last_deletion);
        if (!src->keep_history()) {
          const StorageInfo& source = converter.source_info();
          // Deleted after the destination's last transaction, or after its own record of
          // the last deletions it took (a run interrupted before its removals, at the end,
          // copied transactions past the deletion): walked for. The second costs a walk of
          // both sides' OIDs on each run until the destination records a later deletion.
          if (source.last_deletion &&
              (*source.last_deletion > info.last_tid || !info.last_deletion ||
               *source.last_deletion > *info.last_deletion)) {
            converter.expect_deletions(*source.last_deletion);
          }
        }
        report.started_after = info.last_tid;
        start = Tid(info.last_tid.value() + 1);
      } else {
        throw not_empty(dst_uri, info);
      }
    }
  }
  // --verify compares up to where the source stood now, at the least (verify_copy).
  Tid source_at_start;
  if (o.verify) {
    auto inst = src->new_instance();
    inst->poll_invalidations();
    source_at_start = inst->last_transaction();
  }
  // Until every transaction is in, the destination says it holds an unfinished copy
  // (`relstore info`): a run that is killed, fails or is stopped leaves the note.
  if (dst && !o.dry_run &&
      !dst->set_unfinished_conversion(UnfinishedConversion{src_uri.redacted(), utc_now()}) &&
      o.on_log) {
    o.on_log(
        "the destination has no relstore_conversion table, so an interrupted run will "
        "not be marked incomplete there (`relstore migrate up` adds it)");
  }
  try {
    converter.run(start, report);
  } catch (const std::exception& e) {
    // Whatever stopped the copy, the destination holds what was copied before it and must
    // not pass for a complete copy.
    if (o.dry_run || (report.done.transactions == 0 && !report.cleared)) throw;
    rethrow_as(e, std::string(e.what()) + "; " + std::to_string(report.done.transactions) +
                      " transactions were copied into " + dst_uri.redacted() +
                      (report.cleared ? " after --clear emptied it" : "") +
                      " before this, so it is an incomplete copy: once the cause is fixed, "
                      "--incremental continues after its last transaction");
  }
  if (dst && !o.dry_run) {
    if (report.interrupted) {
      dst->close();
      return report;  // the resume catches the mirror up and verifies
    }
    // Past this point every transaction is in: an error says so, rather than leaving the
    // user to guess whether the copy is whole.
    try {
      dst->set_unfinished_conversion(std::nullopt);
      dst->close();
      catch_up_mirror(dst_uri, o.stop, report);
      if (o.stop && o.stop->load()) {
        report.interrupted_after_copy = true;  // the mirror may be behind; no verification
        return report;
      }
      if (o.verify) verify_copy(o, *src, src_uri, dst_uri, scratch, report, source_at_start);
    } catch (const std::exception& e) {
      rethrow_as(e, std::string(e.what()) + "; this came after the copy: " + dst_uri.redacted() +
                        " holds every transaction of the source" +
                        (report.last_tid ? " up to " + report.last_tid->hex() : "") +
                        ". Once the cause is fixed, `relstore convert --incremental" +
                        (o.verify ? " --verify" : "") + "` with the same arguments" +
                        (o.clear ? " but --clear" : "") +
                        " finishes the rest (the JSON mirror's catch-up" +
                        (o.verify ? " and the verification" : "") + ") and copies nothing");
    }
  }
  return report;
}

}  // namespace relstore
