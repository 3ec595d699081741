// Bulk loading for `relstore convert` into MySQL (issue #5): a continued load replaces
// updated objects and removes deleted ones, in both modes, and a replaced history-free
// row takes its blob chunks with it as a commit would.
#include <gtest/gtest.h>

#include "mysql/support.h"
#include "relstore/convert.h"
#include "relstore/errors.h"
#include "relstore/sample.h"
#include "relstore/storage.h"
#include "support/compare.h"
#include "support/temp_dir.h"

namespace relstore::mysql::testing {
namespace {

using MysqlBulk = MysqlServerTest;

// A SQLite database of 500 sample objects in `d`, the source of the loads.
std::string sample_source(const ::relstore::testing::TempDir& d) {
  const std::string src = "sqlite://" + d.sub("src");
  SampleOptions o;
  o.objects = 500;
  write_sample(src, o);
  return src;
}

void convert_into(const std::string& src, const std::string& dst, bool incremental) {
  ConvertOptions o;
  o.source = src;
  o.destination = dst;
  o.incremental = incremental;
  o.batch_records = 200;  // several batches
  convert(o);
}

TEST_F(MysqlBulk, IncrementalHistoryFreeLoadReplacesAndDeletes) {
  ::relstore::testing::TempDir d;
  const std::string src = sample_source(d);
  const std::string dst = fresh_database("bulk_hf", "?history=free");
  convert_into(src, dst, false);
  auto conn = connect(StorageUri::parse(dst).database);
  // A blob chunk of oid 10's current revision, as RelStorage would have stored it.
  conn->exec(
      "INSERT INTO blob_chunk (zoid, chunk_num, tid, chunk) SELECT zoid, 0, tid, 'x' "
      "FROM object_state WHERE zoid = 10");
  conn->exec("COMMIT");
  ASSERT_EQ(conn->query_int("SELECT COUNT(*) FROM blob_chunk"), 1);
  ::relstore::testing::update_and_delete_some(src);
  convert_into(src, dst, true);
  EXPECT_EQ(::relstore::testing::storage_differences(src, dst), std::vector<std::string>{});
  EXPECT_EQ(conn->query_int("SELECT COUNT(*) FROM blob_chunk"), 0);
  EXPECT_EQ(conn->query_int("SELECT COUNT(*) FROM object_state WHERE zoid BETWEEN 30 AND 34"), 0);
  auto inst = open_storage(dst)->new_instance();
  EXPECT_THROW(inst->load(Oid(30)), POSKeyError);
  EXPECT_EQ(inst->load(Oid(10)).tid, open_storage(src)->new_instance()->load(Oid(10)).tid);
}

TEST_F(MysqlBulk, IncrementalHistoryPreservingLoadAddsRevisions) {
  ::relstore::testing::TempDir d;
  const std::string src = sample_source(d);
  const std::string dst = fresh_database("bulk_hp", "?history=preserving");
  convert_into(src, dst, false);
  ::relstore::testing::update_and_delete_some(src);
  convert_into(src, dst, true);
  EXPECT_EQ(::relstore::testing::storage_differences(src, dst), std::vector<std::string>{});
  auto inst = open_storage(dst)->new_instance();
  EXPECT_THROW(inst->load(Oid(30)), POSKeyError);
  auto source = open_storage(src)->new_instance();
  EXPECT_EQ(inst->history(Oid(10), 100).size(), source->history(Oid(10), 100).size());
  EXPECT_EQ(inst->history(Oid(10), 1).at(0).tid, source->history(Oid(10), 1).at(0).tid);
}

}  // namespace
}  // namespace relstore::mysql::testing
