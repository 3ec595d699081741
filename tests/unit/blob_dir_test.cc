// Blob directory layout: paths as ZODB computes them, listing, writing beside a Data.fs.
#include "relstore/blob_dir.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "relstore/errors.h"
#include "support/temp_dir.h"

namespace relstore {
namespace {

using testing::TempDir;

TEST(BlobDir, IdReprDropsLeadingZeroBytes) {
  EXPECT_EQ(blob_id_repr(0), "0x00");
  EXPECT_EQ(blob_id_repr(1), "0x01");
  EXPECT_EQ(blob_id_repr(0x1234), "0x1234");
  EXPECT_EQ(blob_id_repr(0x03dfd117d4dbf099ULL), "0x03dfd117d4dbf099");
}

TEST(BlobDir, BushyPathHasOneLevelPerOidByte) {
  TempDir dir;
  const BlobDir b = BlobDir::create(dir.sub("blobs"));
  EXPECT_EQ(b.layout(), BlobLayout::bushy);
  EXPECT_EQ(b.blob_path(Oid(0x0102), Tid(0x03dfd117d4dbf099ULL)),
            dir.sub("blobs") + "/0x00/0x00/0x00/0x00/0x00/0x00/0x01/0x02/0x03dfd117d4dbf099.blob");
  std::ifstream marker(dir.sub("blobs") + "/.layout");
  std::string name;
  marker >> name;
  EXPECT_EQ(name, "bushy");
}

TEST(BlobDir, WriteListReadAndLawn) {
  TempDir dir;
  const BlobDir b = BlobDir::create(dir.sub("blobs"));
  b.write_blob(Oid(7), Tid(0x500), "second");
  b.write_blob(Oid(7), Tid(0x400), "first");
  b.write_blob(Oid(3), Tid(0x400), "other");
  const auto files = b.list();
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].oid, Oid(3));
  EXPECT_EQ(files[1].tid, Tid(0x400));
  EXPECT_EQ(files[2].tid, Tid(0x500));
  EXPECT_EQ(b.read_blob(Oid(7), Tid(0x500)), "second");
  EXPECT_TRUE(b.has_blob(Oid(3), Tid(0x400)));
  EXPECT_FALSE(b.has_blob(Oid(3), Tid(0x500)));
  EXPECT_THROW(b.read_blob(Oid(3), Tid(0x500)), POSKeyError);
  const auto perms = std::filesystem::status(files[0].path).permissions();
  EXPECT_EQ(perms & std::filesystem::perms::owner_write, std::filesystem::perms::none);

  const BlobDir copy = BlobDir::create(dir.sub("copy"));
  copy.copy_blob(Oid(7), Tid(0x500), files[2].path);
  EXPECT_EQ(copy.read_blob(Oid(7), Tid(0x500)), "second");

  std::filesystem::create_directories(dir.sub("lawn"));
  std::ofstream(dir.sub("lawn") + "/.layout") << "lawn";
  const BlobDir lawn = BlobDir::open(dir.sub("lawn"));
  EXPECT_EQ(lawn.blob_path(Oid(0x0102), Tid(1)), dir.sub("lawn") + "/0x0102/0x01.blob");
  lawn.write_blob(Oid(0x0102), Tid(1), "x");
  ASSERT_EQ(lawn.list().size(), 1u);
  EXPECT_EQ(lawn.list()[0].oid, Oid(0x0102));

  std::ofstream(dir.sub("blobs") + "/.layout") << "zigzag";
  EXPECT_THROW(BlobDir::open(dir.sub("blobs")), StorageError);
}

std::string layout_marker(const std::string& dir) {
  std::ifstream marker(dir + "/.layout");
  std::string name;
  marker >> name;
  return name;
}

// An empty directory made beforehand (`mkdir blobs`) is bushy, as for ZODB, and gets the
// marker: without it the next open, and ZODB, would take the blobs written for lawn ones.
// A path that is a file is named as one (the error said it did not exist).
TEST(BlobDir, AFileIsNotABlobDirectory) {
  TempDir dir;
  std::ofstream(dir.sub("file")) << "x";
  try {
    BlobDir::open(dir.sub("file"));
    FAIL() << "opened a file as a blob directory";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("is not a directory"), std::string::npos) << e.what();
  }
  EXPECT_THROW(BlobDir::open(dir.sub("missing")), StorageError);
}

TEST(BlobDir, AnExistingEmptyDirectoryGetsTheBushyMarker) {
  TempDir dir;
  std::filesystem::create_directories(dir.sub("blobs"));
  std::ofstream(dir.sub("blobs") + "/.hidden") << "ZODB ignores names starting with a dot";
  const BlobDir b = BlobDir::create(dir.sub("blobs"));
  EXPECT_EQ(b.layout(), BlobLayout::bushy);
  b.write_blob(Oid(1), Tid(0x500), "content");
  EXPECT_EQ(layout_marker(dir.sub("blobs")), "bushy");
  const BlobDir again = BlobDir::open(dir.sub("blobs"));
  EXPECT_EQ(again.layout(), BlobLayout::bushy);
  EXPECT_EQ(again.read_blob(Oid(1), Tid(0x500)), "content");
}

// A used directory without a marker is lawn (ZODB's rule); create writes that down.
TEST(BlobDir, AUsedDirectoryWithoutMarkerIsLawnAndSaysSo) {
  TempDir dir;
  std::filesystem::create_directories(dir.sub("blobs") + "/0x01");
  std::ofstream(dir.sub("blobs") + "/0x01/0x05.blob") << "old";
  EXPECT_EQ(BlobDir::open(dir.sub("blobs")).layout(), BlobLayout::lawn);
  const BlobDir b = BlobDir::create(dir.sub("blobs"));
  EXPECT_EQ(b.layout(), BlobLayout::lawn);
  EXPECT_EQ(layout_marker(dir.sub("blobs")), "lawn");
  EXPECT_EQ(b.read_blob(Oid(1), Tid(5)), "old");
}

}  // namespace
}  // namespace relstore
