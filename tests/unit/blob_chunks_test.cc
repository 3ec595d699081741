// A commit's blob file cut into blob_chunk's pieces, and the blob directory's hand-over of
// a caller's file (DbInstance::store_blob).
#include "backend/blob_chunks.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "relstore/blob_dir.h"
#include "relstore/errors.h"
#include "support/temp_dir.h"

namespace relstore {
namespace {

using testing::TempDir;

std::vector<std::pair<int64_t, Bytes>> chunks_of(const std::string& path, size_t size) {
  std::vector<std::pair<int64_t, Bytes>> out;
  backend::read_blob_chunks(path, size, [&](int64_t n, Bytes&& b) { out.emplace_back(n, b); });
  return out;
}

TEST(BlobChunks, CutsAFileIntoNumberedPieces) {
  TempDir dir;
  std::ofstream(dir.sub("b"), std::ios::binary) << "abcdefghij";
  const auto pieces = chunks_of(dir.sub("b"), 4);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0], std::make_pair(int64_t{0}, Bytes("abcd")));
  EXPECT_EQ(pieces[1], std::make_pair(int64_t{1}, Bytes("efgh")));
  EXPECT_EQ(pieces[2], std::make_pair(int64_t{2}, Bytes("ij")));
  EXPECT_EQ(chunks_of(dir.sub("b"), 10).size(), 1u);
}

TEST(BlobChunks, AnEmptyFileIsOneEmptyChunk) {
  TempDir dir;
  std::ofstream(dir.sub("empty"), std::ios::binary).flush();
  const auto pieces = chunks_of(dir.sub("empty"), 4);
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(pieces[0], std::make_pair(int64_t{0}, Bytes()));
}

TEST(BlobChunks, AMissingFileIsAnErrorNamingIt) {
  TempDir dir;
  try {
    chunks_of(dir.sub("gone"), 4);
    FAIL() << "read a missing file";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.sub("gone")), std::string::npos) << e.what();
  }
}

TEST(BlobDirTake, MovesTheFileIntoTmpAndPublishesItReadOnly) {
  TempDir dir;
  const BlobDir blobs = BlobDir::create(dir.sub("cache"));
  std::ofstream(dir.sub("upload"), std::ios::binary) << "content";
  const std::string taken = blobs.take(dir.sub("upload"));
  EXPECT_FALSE(std::filesystem::exists(dir.sub("upload")));
  EXPECT_EQ(std::filesystem::path(taken).parent_path(), dir.path() / "cache" / "tmp");
  blobs.publish(taken, Oid(1), Tid(2));
  EXPECT_EQ(blobs.read_blob(Oid(1), Tid(2)), "content");
  struct stat st {};
  ASSERT_EQ(::stat(blobs.blob_path(Oid(1), Tid(2)).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0222, 0u);
}

TEST(BlobDirTake, AMissingFileIsAnErrorThatLeavesNothing) {
  TempDir dir;
  const BlobDir blobs = BlobDir::create(dir.sub("cache"));
  EXPECT_THROW(blobs.take(dir.sub("nothing")), StorageError);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path() / "cache" / "tmp"));
}

TEST(BlobDirTake, WriteTemporaryKeepsTheContent) {
  TempDir dir;
  const BlobDir blobs = BlobDir::create(dir.sub("cache"));
  const std::string tmp = blobs.write_temporary(std::string("a\0b", 3));
  std::ifstream in(tmp, std::ios::binary);
  std::string back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(back, std::string("a\0b", 3));
}

}  // namespace
}  // namespace relstore
