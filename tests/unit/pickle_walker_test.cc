// The opcode walker: every opcode of protocols 2-5 not covered by the mapping and legacy
// tests, the memo variants, stack operations and the record structure.
#include <gtest/gtest.h>

#include <string>

#include "pickle_test_util.h"
#include "relstore/pickle.h"

namespace relstore {
namespace {

using namespace std::string_literals;
using namespace testing::pk;

std::string state(const std::string& ops) { return json_of(ops); }

TEST(PickleWalker, MemoVariants) {
  // PUT/GET (text), BINPUT/BINGET, LONG_BINPUT/LONG_BINGET, MEMOIZE (protocol 4).
  EXPECT_EQ(state(str("a") + "p7\n" + "0" + "g7\n"), R"J("a")J");
  EXPECT_EQ(state(str("b") + put(20) + "0" + get(20)), R"J("b")J");
  EXPECT_EQ(state(str("c") + "r" + le(40, 4) + "0" + "j" + le(40, 4)), R"J("c")J");
  // MEMOIZE numbers entries by count: the class pickle stored nothing, so this is key 0.
  EXPECT_EQ(state(proto(4) + str("d") + op(0x94) + "0" + get(0)), R"J("d")J");
}

TEST(PickleWalker, MemoIsSharedBetweenClassAndStatePickles) {
  // ZODB pickles both with one pickler: the state may refer to the class pickle's memo.
  const std::string cls = proto(3) + global("app", "Doc") + put(0) + stop();
  const DecodedRecord r = decode_record(cls + proto(3) + list_of({get(0)}) + stop());
  EXPECT_EQ(r.class_name, "app.Doc");
  EXPECT_EQ(r.ghost_pickle, cls);
  EXPECT_EQ(r.json, R"J([{"::":"global","name":"app.Doc"}])J");
}

TEST(PickleWalker, ClassPickleForms) {
  // GLOBAL alone, (GLOBAL, None), (GLOBAL, args) and protocol 4's STACK_GLOBAL.
  EXPECT_EQ(decode_record(class_pickle("a.b", "C") + proto(3) + none() + stop()).class_name,
            "a.b.C");
  EXPECT_EQ(decode_record(proto(2) + global("a.b", "C") + none() + tuple2() + stop() + proto(2) +
                          none() + stop())
                .class_name,
            "a.b.C");
  EXPECT_EQ(decode_record(proto(2) + global("a.b", "C") + tuple_of({integer(1)}) + tuple2() +
                          stop() + proto(2) + none() + stop())
                .class_name,
            "a.b.C");
  EXPECT_EQ(decode_record(proto(4) + short_str("a.b") + short_str("C") + op(0x93) + stop() +
                          proto(4) + none() + stop())
                .class_name,
            "a.b.C");
}

TEST(PickleWalker, Protocol4And5Opcodes) {
  // FRAME, SHORT_BINUNICODE, BINUNICODE8, BINBYTES8, BYTEARRAY8, STACK_GLOBAL, NEWOBJ_EX.
  const std::string body = short_str("s") + op(0x8d) + le(2, 8) + "u8" + op(0x8e) + le(2, 8) +
                           "b8" + op(0x96) + le(3, 8) + "arr" + tuple_of({});
  const std::string framed = proto(4) + op(0x95) + le(body.size(), 8) + mark() + body + "t";
  EXPECT_EQ(state(framed), R"J(["s","u8","b8","arr",[]])J");
  EXPECT_EQ(state(proto(4) + short_str("app") + short_str("Doc") + op(0x93) +
                  tuple_of({integer(1)}) + dict_of({str("k"), integer(2)}) + op(0x92)),
            R"J({"::":"app.Doc","::()":[1],"::kw":{"k":2}})J");
  EXPECT_EQ(state(proto(4) + short_str("app") + short_str("Doc") + op(0x93) + ")" + "}" + op(0x92)),
            R"J({"::":"app.Doc"})J");
  // Protocol 5 out-of-band buffers need the caller's buffers: a marker.
  EXPECT_EQ(state(proto(5) + op(0x97) + op(0x98)), R"J({"::":"buffer"})J");
}

TEST(PickleWalker, ExtensionCodesAreMarkers) {
  EXPECT_EQ(state(op(0x82) + op(7)), R"J({"::":"ext","code":7})J");
  EXPECT_EQ(state(op(0x83) + le(300, 2)), R"J({"::":"ext","code":300})J");
  EXPECT_EQ(state(op(0x84) + le(70000, 4)), R"J({"::":"ext","code":70000})J");
}

TEST(PickleWalker, StackOperations) {
  // DUP, POP, POP_MARK, MARK inside a frame.
  EXPECT_EQ(state(integer(1) + "2" + tuple2()), "[1,1]");
  EXPECT_EQ(state(integer(1) + integer(2) + "0"), "1");
  EXPECT_EQ(state(integer(1) + mark() + integer(2) + integer(3) + "1"), "1");
  // POP on an empty frame drops the frame (as CPython does).
  EXPECT_EQ(state(integer(1) + mark() + "0"), "1");
}

TEST(PickleWalker, IntegerOpcodes) {
  EXPECT_EQ(state("J" + le(static_cast<uint64_t>(-2147483648LL), 4)), "-2147483648");
  EXPECT_EQ(state("M" + le(65535, 2)), "65535");
  EXPECT_EQ(state(op(0x8a) + op(0)), "0");  // LONG1 of no bytes is 0
  EXPECT_EQ(state(op(0x8b) + le(2, 4) + le(0xff00, 2)), "-256");
  EXPECT_EQ(state(op(0x8a) + op(1) + op(0x80)), "-128");
}

TEST(PickleWalker, TrailingBytesAfterTheStatePickleAreIgnored) {
  // ZODB's unpickler stops at the second STOP too.
  EXPECT_EQ(decode_record(record(integer(1)) + "garbage").json, "1");
}

TEST(PickleWalker, ScannerMatchesDecoder) {
  const std::string rec =
      record(dict_of({str("a"), ref(3, "app", "A"), str("b"),
                      list_of({ref(1, "app", "B"), oid(2) + binpersid(), ref(3, "app", "A")}),
                      str("p2"), "(U\x08"s + be64(4) + "t" + binpersid()}));
  const DecodedRecord r = decode_record(rec);
  EXPECT_EQ(r.refs, (std::vector<Oid>{Oid(1), Oid(2), Oid(3), Oid(4)}));
  EXPECT_EQ(scan_references(rec), r.refs);
}

TEST(PickleWalker, RecordDecoderIsReusable) {
  RecordDecoder decoder;
  DecodedRecord out;
  decoder.decode(record(dict_of({str("x"), ref(5, "app", "A")})), out);
  EXPECT_EQ(out.refs, std::vector<Oid>{Oid(5)});
  decoder.decode(record(integer(3), "BTrees.Length", "Length"), out);
  EXPECT_EQ(out.json, "3");
  EXPECT_EQ(out.class_name, "BTrees.Length.Length");
  EXPECT_TRUE(out.refs.empty());
  EXPECT_THROW(decoder.decode("not a pickle", out), PickleError);
  decoder.decode(record(str("again")), out);
  EXPECT_EQ(out.json, R"J("again")J");
}

}  // namespace
}  // namespace relstore
