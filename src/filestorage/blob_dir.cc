#include "relstore/blob_dir.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "relstore/errors.h"

namespace relstore {
namespace fsys = std::filesystem;
namespace {

constexpr const char* kLayoutFile = ".layout";
constexpr const char* kSuffix = ".blob";

[[noreturn]] void fail(const std::string& what, const std::error_code& ec) {
  throw StorageError(what + ": " + ec.message());
}

// A blob file, or the directory that names it, made durable: a Data.fs transaction that
// refers to a blob may reach the disk, and the blob must not lag behind it.
void sync_path(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), O_RDONLY | (directory ? O_DIRECTORY : 0));
  if (fd < 0 || ::fsync(fd) != 0) {
    const std::error_code ec(errno, std::generic_category());
    if (fd >= 0) ::close(fd);
    fail("cannot sync " + path, ec);
  }
  ::close(fd);
}

std::string hex_byte(unsigned v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  return {kDigits[(v >> 4) & 0xf], kDigits[v & 0xf]};
}

// Parses "0x" + an even number of hex digits (at most 16) as ZODB's id repr writes it.
std::optional<uint64_t> parse_repr(std::string_view s) {
  if (s.size() < 4 || s.size() > 18 || s.substr(0, 2) != "0x" || s.size() % 2) return std::nullopt;
  uint64_t v = 0;
  for (char c : s.substr(2)) {
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return std::nullopt;
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  return v;
}

// Creates `p` and its missing parents. A new directory's name lives in its parent, so
// each parent that gained one is synced: otherwise a crash could lose the directory of a
// blob whose file and whose Data.fs transaction were both synced.
void make_dirs(const fsys::path& p) {
  std::error_code ec;
  std::vector<fsys::path> created;
  for (fsys::path q = p; !q.empty() && !fsys::exists(q, ec); q = q.parent_path()) {
    created.push_back(q);
    if (!q.has_relative_path() || q.parent_path() == q) break;
  }
  fsys::create_directories(p, ec);
  if (ec) fail("cannot create blob directory " + p.string(), ec);
  // ZODB keeps the directories it creates private to the owner; one that existed keeps
  // the rights an administrator gave it.
  if (!created.empty() && created.front() == p) {
    fsys::permissions(p, fsys::perms::owner_all, fsys::perm_options::replace, ec);
  }
  for (const auto& q : created) {
    sync_path(q.has_parent_path() ? q.parent_path().string() : ".", true);
  }
}

// ZODB's choice for a directory without a `.layout` (auto_layout_select in ZODB.blob):
// bushy when it holds nothing but hidden entries, lawn when it holds anything else.
BlobLayout layout_without_marker(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : fsys::directory_iterator(dir, ec)) {
    if (!e.path().filename().string().starts_with('.')) return BlobLayout::lawn;
  }
  return BlobLayout::bushy;
}

}  // namespace

std::string blob_id_repr(uint64_t id) {
  std::string out = "0x";
  int shift = 56;
  while (shift > 0 && ((id >> shift) & 0xff) == 0) shift -= 8;
  for (; shift >= 0; shift -= 8) out += hex_byte(static_cast<unsigned>(id >> shift));
  return out;
}

BlobDir BlobDir::open(const std::string& dir) {
  std::error_code ec;
  if (!fsys::is_directory(dir, ec)) {
    throw StorageError("blob directory " + dir +
                       (fsys::exists(dir, ec) ? " is not a directory" : " does not exist"));
  }
  const fsys::path marker = fsys::path(dir) / kLayoutFile;
  if (!fsys::exists(marker, ec)) return BlobDir(dir, layout_without_marker(dir), true);
  std::ifstream in(marker);
  std::string name;
  in >> name;
  if (name == "bushy") return BlobDir(dir, BlobLayout::bushy);
  if (name == "lawn") return BlobDir(dir, BlobLayout::lawn);
  throw StorageError("blob directory " + dir + " has unknown layout '" + name + "' in " +
                     marker.string());
}

BlobDir BlobDir::create(const std::string& dir) {
  std::error_code ec;
  const fsys::path marker = fsys::path(dir) / kLayoutFile;
  if (!fsys::exists(marker, ec)) {
    // Decided before anything is created in it, and written down, so that ZODB (and the
    // next open) reads the layout the blobs are written in rather than guessing.
    const BlobLayout layout =
        fsys::exists(dir, ec) ? layout_without_marker(dir) : BlobLayout::bushy;
    make_dirs(dir);
    std::ofstream out(marker);
    out << layout_name(layout);
    out.close();
    if (!out) throw StorageError("cannot write " + marker.string());
    // An empty marker after a crash would make the directory unreadable ("unknown layout").
    sync_path(marker.string(), false);
    sync_path(dir, true);
  }
  make_dirs(fsys::path(dir) / "tmp");
  return open(dir);
}

std::string BlobDir::oid_dir(Oid oid) const {
  fsys::path p = dir_;
  if (layout_ == BlobLayout::lawn) return (p / blob_id_repr(oid.value())).string();
  for (int shift = 56; shift >= 0; shift -= 8) {
    p /= "0x" + hex_byte(static_cast<unsigned>(oid.value() >> shift));
  }
  return p.string();
}

std::string BlobDir::blob_path(Oid oid, Tid tid) const {
  return (fsys::path(oid_dir(oid)) / (blob_id_repr(tid.value()) + kSuffix)).string();
}

bool BlobDir::has_blob(Oid oid, Tid tid) const {
  std::error_code ec;
  const std::string p = blob_path(oid, tid);
  const auto st = fsys::status(p, ec);
  // Missing is an answer; a directory that cannot be read is not one.
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory) {
    fail("cannot look for the blob file " + p, ec);
  }
  return !ec && fsys::is_regular_file(st);
}

void BlobDir::remove_stale_temporaries() const {
  std::error_code ec;
  for (const auto& e : fsys::directory_iterator(fsys::path(dir_) / "tmp", ec)) {
    if (!e.path().filename().string().starts_with("relstore-")) continue;  // ZODB's own
    fsys::remove(e.path(), ec);
  }
}

std::string layout_name(BlobLayout layout) {
  return layout == BlobLayout::bushy ? "bushy" : "lawn";
}

std::vector<BlobFile> BlobDir::list(size_t at_most) const {
  std::vector<BlobFile> out;
  std::error_code ec;
  const fsys::path root = dir_;
  for (auto it = fsys::recursive_directory_iterator(root, ec);
       !ec && it != fsys::recursive_directory_iterator(); it.increment(ec)) {
    const fsys::path& p = it->path();
    const std::string name = p.filename().string();
    if (it->is_directory() && (name == "tmp" || name.starts_with('.'))) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || !name.ends_with(kSuffix)) continue;
    const auto tid = parse_repr(std::string_view(name).substr(0, name.size() - 5));
    std::optional<uint64_t> oid;
    const fsys::path rel = p.parent_path().lexically_relative(root);
    if (layout_ == BlobLayout::lawn) {
      oid = parse_repr(rel.string());
    } else {
      uint64_t v = 0;
      int levels = 0;
      for (const auto& part : rel) {
        const auto b = parse_repr(part.string());
        if (!b || part.string().size() != 4) break;
        v = (v << 8) | *b;
        ++levels;
      }
      if (levels == 8) oid = v;
    }
    if (oid && tid) out.push_back({Oid(*oid), Tid(*tid), p.string()});
    if (out.size() >= at_most) break;
  }
  if (ec) fail("cannot list blob directory " + dir_, ec);
  std::sort(out.begin(), out.end(), [](const BlobFile& a, const BlobFile& b) {
    return std::tie(a.oid, a.tid) < std::tie(b.oid, b.tid);
  });
  return out;
}

void BlobDir::publish(const std::string& tmp, Oid oid, Tid tid) const {
  std::error_code ec;
  make_dirs(oid_dir(oid));
  const std::string target = blob_path(oid, tid);
  fsys::permissions(tmp,
                    fsys::perms::owner_read | fsys::perms::group_read | fsys::perms::others_read,
                    fsys::perm_options::replace, ec);
  fsys::rename(tmp, target, ec);
  if (ec) {
    fsys::remove(tmp);
    fail("cannot move blob into " + target, ec);
  }
  sync_path(oid_dir(oid), true);
}

std::string BlobDir::write_temporary(std::string_view content) const {
  return *write_temporary_from([&](const PieceWriter& write) {
    write(content);
    return true;
  });
}

std::optional<std::string> BlobDir::write_temporary_from(
    const std::function<bool(const PieceWriter&)>& fill) const {
  const std::string tmp = new_temporary();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  const auto failed = [&] {
    return StorageError("cannot write a blob to " + tmp + ": " + std::strerror(errno));
  };
  bool found = false;
  try {
    if (fd < 0) throw failed();
    found = fill([&](std::string_view piece) {
      for (size_t done = 0; done < piece.size();) {
        const ssize_t n = ::write(fd, piece.data() + done, piece.size() - done);
        if (n < 0) throw failed();
        done += static_cast<size_t>(n);
      }
    });
    if (found && ::fsync(fd) != 0) throw failed();
  } catch (...) {
    if (fd >= 0) ::close(fd);
    std::error_code ec;
    fsys::remove(tmp, ec);
    throw;
  }
  ::close(fd);
  if (!found) {
    fsys::remove(tmp);
    return std::nullopt;
  }
  return tmp;
}

void BlobDir::write_blob(Oid oid, Tid tid, std::string_view content) const {
  publish(write_temporary(content), oid, tid);
}

std::string BlobDir::new_temporary() const {
  make_dirs(fsys::path(dir_) / "tmp");
  std::string tmp = (fsys::path(dir_) / "tmp" / "relstore-XXXXXX").string();
  const int fd = mkstemp(tmp.data());
  if (fd < 0) throw StorageError("cannot create a temporary blob file in " + dir_ + "/tmp");
  ::close(fd);
  return tmp;
}

std::string BlobDir::take(const std::string& file) const {
  const std::string tmp = new_temporary();
  std::error_code ec;
  fsys::rename(file, tmp, ec);
  if (ec == std::errc::cross_device_link) {
    ec.clear();
    fsys::copy_file(file, tmp, fsys::copy_options::overwrite_existing, ec);
    if (!ec) fsys::remove(file, ec);
  }
  if (ec) {
    fsys::remove(tmp);
    fail("cannot take blob file " + file + " into " + dir_ + "/tmp", ec);
  }
  sync_path(tmp, false);
  return tmp;
}

void BlobDir::copy_blob(Oid oid, Tid tid, const std::string& source_file) const {
  const std::string tmp = new_temporary();
  std::error_code ec;
  fsys::copy_file(source_file, tmp, fsys::copy_options::overwrite_existing, ec);
  if (ec) {
    fsys::remove(tmp);
    fail("cannot copy blob of oid " + oid.hex() + " from " + source_file, ec);
  }
  sync_path(tmp, false);
  publish(tmp, oid, tid);
}

std::string BlobDir::read_blob(Oid oid, Tid tid) const {
  const std::string p = blob_path(oid, tid);
  std::ifstream in(p, std::ios::binary);
  if (!in) throw POSKeyError(oid, tid);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace relstore
