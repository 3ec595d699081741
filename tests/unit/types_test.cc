#include "relstore/types.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace relstore {
namespace {

TEST(Id, BytesAreBigEndian) {
  const Oid oid(0x0102030405060708ULL);
  EXPECT_EQ(oid.bytes(), std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8));
  EXPECT_EQ(Oid::from_bytes(oid.bytes()), oid);
  EXPECT_EQ(Oid(0).bytes(), std::string(8, '\0'));
}

TEST(Id, FromBytesRejectsWrongLength) {
  EXPECT_THROW(Tid::from_bytes("1234567"), std::invalid_argument);
  EXPECT_THROW(Tid::from_bytes("123456789"), std::invalid_argument);
}

TEST(Id, HexAndSqlRoundTrip) {
  const Tid tid(0x03dfd117d4dbf099ULL);
  EXPECT_EQ(tid.hex(), "0x03dfd117d4dbf099");
  EXPECT_EQ(Tid::from_sql(tid.sql()), tid);
  const Oid high(0xffffffffffffffffULL);
  EXPECT_EQ(high.sql(), -1);
  EXPECT_EQ(Oid::from_sql(-1), high);
}

TEST(Id, OrdersAsUnsigned) {
  EXPECT_LT(Oid(1), Oid(2));
  EXPECT_LT(Oid(0x7fffffffffffffffULL), Oid(0x8000000000000000ULL));
}

}  // namespace
}  // namespace relstore
