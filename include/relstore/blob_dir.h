// ZODB blob directories beside a Data.fs (filestorage.md "Blobs"): where the committed blob
// file of each (oid, tid) lives, in the `bushy` layout (default) or the older `lawn` one.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "relstore/types.h"

namespace relstore {

enum class BlobLayout { bushy, lawn };
std::string layout_name(BlobLayout layout);

// ZODB's repr of an 8-byte id in blob paths: "0x" + hex without leading zero bytes
// ("0x00" for zero, "0x03dfd117d4dbf099" for a modern TID).
std::string blob_id_repr(uint64_t id);

struct BlobFile {
  Oid oid;
  Tid tid;
  std::string path;
};

class BlobDir {
 public:
  // An existing blob directory; its layout comes from `.layout` (a directory without one
  // is bushy when empty, else lawn, as ZODB decides). Throws StorageError if it is
  // missing or names a layout relstore does not know.
  static BlobDir open(const std::string& dir);
  // Opens `dir`, creating it (mode 0700, `.layout` = bushy, `tmp/`) when missing.
  static BlobDir create(const std::string& dir);

  const std::string& path() const { return dir_; }
  BlobLayout layout() const { return layout_; }
  // True when the directory has no `.layout` and its layout was guessed as ZODB does.
  bool layout_guessed() const { return guessed_; }

  // Where the committed blob of revision `tid` of `oid` lives (whether or not it exists).
  std::string blob_path(Oid oid, Tid tid) const;
  // Whether that file exists; StorageError when the directory cannot be read.
  bool has_blob(Oid oid, Tid tid) const;
  // Every committed blob file, ordered by oid then tid; with `at_most`, the first found.
  std::vector<BlobFile> list(size_t at_most = SIZE_MAX) const;

  // Writes a committed blob: to a temporary file under `tmp/`, then renamed into place and
  // made read-only, so a reader never sees a partial blob.
  void write_blob(Oid oid, Tid tid, std::string_view content) const;
  // The same, copying an existing file (e.g. the source storage's blob).
  void copy_blob(Oid oid, Tid tid, const std::string& source_file) const;
  std::string read_blob(Oid oid, Tid tid) const;
  // Moves a caller's file into `tmp/` (a copy when it is on another filesystem) and
  // returns its new path there: what a commit keeps until publish() or its removal.
  std::string take(const std::string& file) const;
  // Writes `content` to a new file under `tmp/` (synced) and returns its path.
  std::string write_temporary(std::string_view content) const;
  // The same for a content that arrives in pieces, so that it never sits in memory whole:
  // `fill` hands each piece to its argument, in order, and returns false when there turns
  // out to be no content (the file then goes, and none is returned). A throw from `fill`
  // removes the file too.
  using PieceWriter = std::function<void(std::string_view)>;
  std::optional<std::string> write_temporary_from(
      const std::function<bool(const PieceWriter&)>& fill) const;
  // Moves a finished file of `tmp/` into place as the committed blob, read-only.
  void publish(const std::string& tmp, Oid oid, Tid tid) const;
  // Removes what an interrupted write of relstore's left in `tmp/` (never ZODB's own
  // files there); only for the one process writing this directory.
  void remove_stale_temporaries() const;

 private:
  BlobDir(std::string dir, BlobLayout layout, bool guessed = false)
      : dir_(std::move(dir)), layout_(layout), guessed_(guessed) {}
  std::string oid_dir(Oid oid) const;
  // A new empty file under `tmp/` named relstore-…, closed.
  std::string new_temporary() const;

  std::string dir_;
  BlobLayout layout_;
  bool guessed_;
};

}  // namespace relstore
