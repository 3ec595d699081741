// One test (or more) per row of the mapping table in json-mirror.md, on hand-assembled
// protocol 2-4 pickles. Expected JSON is exact text: the decoder writes compact JSON with
// keys in pickle order.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "pickle_test_util.h"
#include "relstore/pickle.h"

namespace relstore {
namespace {

using namespace testing::pk;

std::string state(const std::string& ops, const DecodeOptions& o = {}) { return json_of(ops, o); }

TEST(PickleMapping, TopLevelStateAndClassName) {
  const DecodedRecord r =
      decode_record(record(dict_of({str("a"), integer(1)}), "app.models", "Doc"));
  EXPECT_EQ(r.class_name, "app.models.Doc");
  EXPECT_EQ(r.json, R"J({"a":1})J");
  EXPECT_EQ(r.ghost_pickle, class_pickle("app.models", "Doc"));
  EXPECT_TRUE(r.refs.empty());
}

TEST(PickleMapping, NoneBoolIntFloat) {
  EXPECT_EQ(state(none()), "null");
  EXPECT_EQ(state(yes()), "true");
  EXPECT_EQ(state(no()), "false");
  EXPECT_EQ(state(integer(7)), "7");
  EXPECT_EQ(state(integer(-7)), "-7");
  EXPECT_EQ(state(integer(70000)), "70000");
  EXPECT_EQ(state(long1(std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8))),
            "9223372036854775807");
  EXPECT_EQ(state(long1(std::string("\x00\x00\x00\x00\x00\x00\x00\x80", 8))),
            "-9223372036854775808");
  EXPECT_EQ(state(binfloat(1.5)), "1.5");
  EXPECT_EQ(state(binfloat(63.0)), "63.0");
  EXPECT_EQ(state(binfloat(0.1 + 0.2)), "0.30000000000000004");
  EXPECT_EQ(state(binfloat(1e16)), "1e+16");
  EXPECT_EQ(state(binfloat(1e-5)), "1e-05");
}

TEST(PickleMapping, NanAndInfinityBecomeNull) {
  EXPECT_EQ(state(binfloat(std::numeric_limits<double>::quiet_NaN())), "null");
  EXPECT_EQ(state(binfloat(std::numeric_limits<double>::infinity())), "null");
  EXPECT_EQ(state(binfloat(-std::numeric_limits<double>::infinity())), "null");
}

TEST(PickleMapping, IntegersBeyond64BitsAreExactDigits) {
  // 2^64 = 18446744073709551616: nine bytes, little-endian.
  EXPECT_EQ(state(long1(std::string("\x00\x00\x00\x00\x00\x00\x00\x00\x01", 9))),
            "18446744073709551616");
  // -(2^64)
  EXPECT_EQ(state(long1(std::string("\x00\x00\x00\x00\x00\x00\x00\x00\xff", 9))),
            "-18446744073709551616");
  // 2^100 = 1267650600228229401496703205376
  std::string b(13, '\0');
  b[12] = 0x10;
  EXPECT_EQ(state(long1(b)), "1267650600228229401496703205376");
}

TEST(PickleMapping, StringsKeepCharactersOutsideTheBmp) {
  EXPECT_EQ(state(str("caf\xc3\xa9 \xf0\x9f\x98\x80")), "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"");
  EXPECT_EQ(state(str("tab\there \"q\" back\\slash\n")), R"J("tab\there \"q\" back\\slash\n")J");
  EXPECT_EQ(state(str(std::string("\x01\x1f", 2))), R"J("\u0001\u001f")J");
}

TEST(PickleMapping, LoneSurrogatesBecomeReplacementCharacters) {
  // Python writes str with surrogatepass: U+D800 alone is ED A0 80.
  EXPECT_EQ(state(str("a\xed\xa0\x80z")), "\"a\xef\xbf\xbdz\"");
  EXPECT_EQ(state(str("\xed\xb8\x80")), "\"\xef\xbf\xbd\"");  // a lone low surrogate
  // A high and a low surrogate in a row are one character (U+1F600).
  EXPECT_EQ(state(str("\xed\xa0\xbd\xed\xb8\x80")), "\"\xf0\x9f\x98\x80\"");
  // Bytes that are not UTF-8 at all are replaced one by one.
  EXPECT_EQ(state(str("x\xff\xc3(")), "\"x\xef\xbf\xbd\xef\xbf\xbd(\"");
}

TEST(PickleMapping, BytesAsciiOrHex) {
  EXPECT_EQ(state(bytes("Central African Republic")), R"J("Central African Republic")J");
  EXPECT_EQ(state(bytes(std::string("\x00\x01\xfe", 3))), R"J({"::":"hex","hex":"0001fe"})J");
  // Every ASCII byte but NUL is text (control characters escaped, as the spec's "ASCII →
  // string" and newt.db have it); NUL keeps bytes hex, which jsonb could not hold otherwise.
  EXPECT_EQ(state(bytes("\x01"
                        "a\x7f")),
            "\"\\u0001a\x7f\"");
  EXPECT_EQ(state(bytes(std::string("a\0", 2))), R"J({"::":"hex","hex":"6100"})J");
  EXPECT_EQ(state(bytes("")), R"J("")J");
}

TEST(PickleMapping, Python2StringsByOption) {
  const std::string latin = py2("caf\xe9");
  EXPECT_EQ(state(latin), R"J({"::":"hex","hex":"636166e9"})J");
  DecodeOptions o;
  o.py2_str = Py2StrMode::kLatin1;
  EXPECT_EQ(state(latin, o), "\"caf\xc3\xa9\"");
  o.py2_str = Py2StrMode::kUtf8;
  EXPECT_EQ(state(latin, o), R"J({"::":"hex","hex":"636166e9"})J");  // not UTF-8: stays hex
  EXPECT_EQ(state(py2("caf\xc3\xa9"), o), "\"caf\xc3\xa9\"");
  EXPECT_EQ(state(py2("plain")), R"J("plain")J");
}

TEST(PickleMapping, TupleAndListAreArrays) {
  EXPECT_EQ(state(tuple_of({integer(1), str("a"), none()})), R"J([1,"a",null])J");
  EXPECT_EQ(state(list_of({integer(1), list_of({})})), "[1,[]]");
  EXPECT_EQ(state(")"), "[]");
  EXPECT_EQ(state(integer(1) + integer(2) + tuple2()), "[1,2]");
}

TEST(PickleMapping, DictWithSimpleKeysIsAnObject) {
  EXPECT_EQ(state(dict_of({str("s"), integer(1), integer(2), integer(3), binfloat(1.5), str("f"),
                           yes(), str("t"), none(), str("n")})),
            R"J({"s":1,"2":3,"1.5":"f","true":"t","null":"n"})J");
}

TEST(PickleMapping, DictWithOtherKeysIsAnItemList) {
  EXPECT_EQ(state(dict_of({tuple_of({integer(1), integer(2)}), str("pair"), str("k"), integer(0)})),
            R"J({"::":"dict","items":[[[1,2],"pair"],["k",0]]})J");
  // Python 3 bytes keys are not str.
  EXPECT_EQ(state(dict_of({bytes("k"), integer(1)})), R"J({"::":"dict","items":[["k",1]]})J");
}

TEST(PickleMapping, SetsAreSortedArrays) {
  const std::string set4 =
      proto(4) + op(0x8f) + mark() + integer(3) + integer(1) + integer(20) + op(0x90);
  EXPECT_EQ(state(set4), "[1,3,20]");
  const std::string frozen4 = proto(4) + mark() + str("b") + str("a") + str("c") + op(0x91);
  EXPECT_EQ(state(frozen4), R"J(["a","b","c"])J");
  // Protocol 2/3 spell them as set([…]) and frozenset([…]).
  EXPECT_EQ(state(global("builtins", "set") + list_of({str("z"), str("y")}) + tuple1() + reduce()),
            R"J(["y","z"])J");
  EXPECT_EQ(state(global("builtins", "frozenset") + list_of({integer(10), integer(9)}) + tuple1() +
                  reduce()),
            "[9,10]");
  EXPECT_EQ(state(global("__builtin__", "set") + ")" + reduce()), "[]");
  // Mixed members: null, booleans, numbers by value, strings.
  EXPECT_EQ(state(global("builtins", "set") +
                  list_of({str("a"), integer(10), binfloat(2.5), none(), yes(), integer(-1)}) +
                  tuple1() + reduce()),
            R"J([null,true,-1,2.5,10,"a"])J");
  // Strings in Python's order, by their characters: a prefix first, whatever follows it,
  // and escaped characters by what they are ("\t" is 9, '"' 34, "Z" 90).
  EXPECT_EQ(state(proto(4) + mark() + str("a!") + str("a") + str(" ") + str("") + op(0x91)),
            R"J([""," ","a","a!"])J");
  EXPECT_EQ(state(proto(4) + mark() + str("Z") + str("\"a") + str("\n") + str("\t") + op(0x91)),
            R"J(["\t","\n","\"a","Z"])J");
  // A control character below a backslash, non-ASCII (UTF-8 bytes above 0x7f) after "~".
  EXPECT_EQ(
      state(proto(4) + mark() + str("\xc3\xa9") + str("~") + str("\\") + str("\x01") + op(0x91)),
      "[\"\\u0001\",\"\\\\\",\"~\",\"\xc3\xa9\"]");
}

std::string datetime_bytes(int y, int mo, int d, int h, int mi, int s, int us) {
  std::string b;
  b += static_cast<char>(y >> 8);
  b += static_cast<char>(y & 0xFF);
  for (int v : {mo, d, h, mi, s}) b += static_cast<char>(v);
  b += static_cast<char>(us >> 16);
  b += static_cast<char>((us >> 8) & 0xFF);
  b += static_cast<char>(us & 0xFF);
  return b;
}

TEST(PickleMapping, NaiveDatetimeAndDate) {
  EXPECT_EQ(state(global("datetime", "datetime") + bytes(datetime_bytes(2024, 4, 9, 3, 39, 0, 0)) +
                  tuple1() + reduce()),
            R"J("2024-04-09T03:39:00")J");
  EXPECT_EQ(state(global("datetime", "datetime") +
                  bytes(datetime_bytes(999, 12, 31, 23, 59, 58, 250)) + tuple1() + reduce()),
            R"J("0999-12-31T23:59:58.000250")J");
  EXPECT_EQ(state(global("datetime", "date") + bytes(std::string("\x07\xe8\x04\x09", 4)) +
                  tuple1() + reduce()),
            R"J("2024-04-09")J");
  // February 29th only in leap years: a payload Python would refuse is no date.
  EXPECT_EQ(state(global("datetime", "datetime") + bytes(datetime_bytes(2024, 2, 29, 0, 0, 0, 0)) +
                  tuple1() + reduce()),
            R"J("2024-02-29T00:00:00")J");
  for (const auto& [y, m, d] : {std::tuple{2024, 2, 30}, std::tuple{2023, 2, 29},
                                std::tuple{1900, 2, 29}, std::tuple{2024, 4, 31}}) {
    SCOPED_TRACE(std::to_string(y) + "-" + std::to_string(m) + "-" + std::to_string(d));
    const std::string json =
        state(global("datetime", "datetime") + bytes(datetime_bytes(y, m, d, 3, 39, 0, 0)) +
              tuple1() + reduce());
    EXPECT_EQ(json.find(R"("::":"datetime","value")"), std::string::npos) << json;
    EXPECT_NE(json.find(R"("::":"datetime.datetime")"), std::string::npos) << json;
  }
}

std::string timezone_hours(int hours) {
  return global("datetime", "timezone") + global("datetime", "timedelta") + integer(0) +
         integer(hours * 3600) + integer(0) + tuple3() + reduce() + tuple1() + reduce();
}

TEST(PickleMapping, DatetimeWithTimezone) {
  const std::string dt = bytes(datetime_bytes(2024, 4, 9, 3, 39, 0, 0));
  EXPECT_EQ(state(global("datetime", "datetime") + dt + timezone_hours(1) + tuple2() + reduce()),
            R"J({"::":"datetime","value":"2024-04-09T03:39:00","tz":{"::":"datetime.timezone",)J"
            R"J("::()":[{"::":"datetime.timedelta","::()":[0,3600,0]}]},)J"
            R"J("iso":"2024-04-09T03:39:00+01:00"})J");
  // timezone(timedelta(-1, 81000)) is UTC-01:30
  const std::string minus = global("datetime", "timezone") + global("datetime", "timedelta") + "J" +
                            le(static_cast<uint64_t>(-1), 4) + integer(81000) + integer(0) +
                            tuple3() + reduce() + tuple1() + reduce();
  EXPECT_NE(state(global("datetime", "datetime") + dt + minus + tuple2() + reduce())
                .find(R"J("iso":"2024-04-09T03:39:00-01:30")J"),
            std::string::npos);
  // pytz: UTC, and a DST zone whose pickle carries its offset.
  EXPECT_EQ(state(global("datetime", "datetime") + dt + global("pytz", "_UTC") + ")" + reduce() +
                  tuple2() + reduce()),
            R"J({"::":"datetime","value":"2024-04-09T03:39:00","tz":{"::":"pytz._UTC"},)J"
            R"J("iso":"2024-04-09T03:39:00+00:00"})J");
  EXPECT_EQ(state(global("datetime", "datetime") + dt + global("pytz", "_p") + mark() +
                  str("Europe/Berlin") + integer(7200) + integer(3600) + str("CEST") + "t" +
                  reduce() + tuple2() + reduce()),
            R"J({"::":"datetime","value":"2024-04-09T03:39:00","tz":{"::":"pytz._p",)J"
            R"J("::()":["Europe/Berlin",7200,3600,"CEST"]},"iso":"2024-04-09T03:39:00+02:00"})J");
  // zoneinfo needs the tz database for its offset: no "iso".
  EXPECT_EQ(state(global("datetime", "datetime") + dt + global("zoneinfo", "ZoneInfo") +
                  str("Europe/Paris") + tuple1() + reduce() + tuple2() + reduce()),
            R"J({"::":"datetime","value":"2024-04-09T03:39:00","tz":{"::":"zoneinfo.ZoneInfo",)J"
            R"J("::()":["Europe/Paris"]}})J");
}

// Fixed offsets of pytz and dateutil (what dateutil.parser gives for "…Z" or "-05:00").
TEST(PickleMapping, DatetimeWithTheFixedOffsetsOfPytzAndDateutil) {
  const std::string dt = bytes(datetime_bytes(2020, 1, 2, 3, 4, 5, 0));
  const auto iso = [&](const std::string& tz) {
    const std::string json = state(global("datetime", "datetime") + dt + tz + tuple2() + reduce());
    const size_t at = json.find(R"("iso":")");
    return at == std::string::npos ? std::string("no iso in " + json)
                                   : json.substr(at + 7, json.find('"', at + 7) - at - 7);
  };
  const std::string minus_300 = "J" + le(static_cast<uint64_t>(-300), 4);
  const std::string minus_18000 = "J" + le(static_cast<uint64_t>(-18000), 4);
  // pytz.FixedOffset(-300): its pickle is the call FixedOffset(minutes).
  EXPECT_EQ(iso(global("pytz", "FixedOffset") + minus_300 + tuple1() + reduce()),
            "2020-01-02T03:04:05-05:00");
  // dateutil.tz.tzutc(), pickled with protocol 2.
  EXPECT_EQ(iso(global("dateutil.tz.tz", "tzutc") + ")" + op(0x81)), "2020-01-02T03:04:05+00:00");
  // dateutil.tz.tzoffset: newer releases pickle the instance dict, whose _offset is a
  // timedelta (-1 day + 68400 s); older ones the call tzoffset(name, seconds).
  const std::string td = global("datetime", "timedelta") + "J" + le(static_cast<uint64_t>(-1), 4) +
                         integer(68400) + integer(0) + tuple3() + reduce();
  EXPECT_EQ(iso(global("dateutil.tz.tz", "tzoffset") + ")" + op(0x81) + "}" + mark() +
                str("_offset") + td + str("_name") + str("EST") + "u" + "b"),
            "2020-01-02T03:04:05-05:00");
  EXPECT_EQ(
      iso(global("dateutil.tz.tz", "tzoffset") + str("EST") + minus_18000 + tuple2() + reduce()),
      "2020-01-02T03:04:05-05:00");
  // Out of range: no "iso".
  EXPECT_EQ(iso(global("pytz", "FixedOffset") + integer(1440) + tuple1() + reduce()).substr(0, 6),
            "no iso");
}

TEST(PickleMapping, Time) {
  EXPECT_EQ(state(global("datetime", "time") + bytes(std::string("\x0d\x05\x09\x00\x00\x00", 6)) +
                  tuple1() + reduce()),
            R"J("13:05:09")J");
  EXPECT_EQ(state(global("datetime", "time") + bytes(std::string("\x0d\x05\x09\x00\x01\x00", 6)) +
                  tuple1() + reduce()),
            R"J("13:05:09.000256")J");
}

TEST(PickleMapping, Timedelta) {
  EXPECT_EQ(state(global("datetime", "timedelta") + integer(1) + integer(2135) + integer(7) +
                  tuple3() + reduce()),
            R"J({"::":"datetime.timedelta","::()":[1,2135,7]})J");
}

TEST(PickleMapping, DecimalIsANumberOrByOptionAString) {
  const std::string d = global("decimal", "Decimal") + str("6.83") + tuple1() + reduce();
  EXPECT_EQ(state(d), "6.83");
  DecodeOptions o;
  o.decimal_as_string = true;
  EXPECT_EQ(state(d, o), R"J("6.83")J");
  EXPECT_EQ(state(global("decimal", "Decimal") + str("1E+2") + tuple1() + reduce()), "1E+2");
  EXPECT_EQ(state(global("decimal", "Decimal") + str("-Infinity") + tuple1() + reduce()), "null");
  EXPECT_EQ(state(global("decimal", "Decimal") + str("NaN") + tuple1() + reduce()), "null");
}

TEST(PickleMapping, Uuid) {
  // uuid.UUID('12345678-1234-5678-1234-567812345678'): NEWOBJ then BUILD {'int': …}.
  std::string le_bytes;
  const std::string hex = "12345678123456781234567812345678";
  for (int i = 30; i >= 0; i -= 2)
    le_bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  EXPECT_EQ(state(global("uuid", "UUID") + ")" + newobj() + dict_of({str("int"), long1(le_bytes)}) +
                  build()),
            R"J({"::":"uuid.UUID","int":24197857161011715162171839636988778104,)J"
            R"J("hex":"12345678-1234-5678-1234-567812345678"})J");
}

TEST(PickleMapping, PersistentReference) {
  const DecodedRecord r = decode_record(
      record(dict_of({str("a"), ref(42, "persistent.mapping", "PersistentMapping"), str("b"),
                      oid(7) + binpersid(), str("c"), oid(42) + none() + tuple2() + binpersid()})));
  EXPECT_EQ(
      r.json,
      R"J({"a":{"::":"persistent","id":[42,"persistent.mapping.PersistentMapping"],"::=>":42},)J"
      R"J("b":{"::":"persistent","id":7,"::=>":7},"c":{"::":"persistent","id":42,"::=>":42}})J");
  EXPECT_EQ(r.refs, (std::vector<Oid>{Oid(7), Oid(42)}));
}

TEST(PickleMapping, WeakAndCrossDatabaseReferences) {
  const DecodedRecord r = decode_record(record(dict_of(
      {str("w"), list_of({str("w"), oid(5) + tuple1()}) + binpersid(), str("m"),
       list_of({str("m"), str("other") + oid(6) + global("app", "Doc") + tuple3()}) + binpersid(),
       str("n"), list_of({str("n"), str("other") + oid(7) + tuple2()}) + binpersid()})));
  EXPECT_EQ(r.json, R"J({"w":{"::":"persistent","kind":"w","::=>":5},)J"
                    R"J("m":{"::":"persistent","kind":"m","db":"other","::=>":6},)J"
                    R"J("n":{"::":"persistent","kind":"n","db":"other","::=>":7}})J");
  // Like ZODB's referencesf: weak and cross-database references keep nothing alive here.
  EXPECT_TRUE(r.refs.empty());
  EXPECT_TRUE(
      scan_references(record(list_of({str("w"), oid(5) + tuple1()}) + binpersid())).empty());
  // [oid]: how old ZODB versions wrote a weak reference.
  const DecodedRecord old = decode_record(record(list_of({oid(8)}) + binpersid()));
  EXPECT_EQ(old.json, R"J({"::":"persistent","kind":"w","::=>":8})J");
  EXPECT_TRUE(old.refs.empty());
}

TEST(PickleMapping, OtherInstances) {
  // REDUCE with arguments, then a dict state.
  EXPECT_EQ(state(global("app", "Point") + integer(1) + integer(2) + tuple2() + reduce() +
                  dict_of({str("label"), str("p")}) + build()),
            R"J({"::":"app.Point","::()":[1,2],"label":"p"})J");
  // NEWOBJ without arguments and a dict state.
  EXPECT_EQ(
      state(global("app", "Doc") + ")" + newobj() + dict_of({str("title"), str("t")}) + build()),
      R"J({"::":"app.Doc","title":"t"})J");
  // A state that is not a dict.
  EXPECT_EQ(state(global("app", "Cell") + ")" + newobj() + integer(5) + build()),
            R"J({"::":"app.Cell","state":5})J");
  // (dict, slots) states are merged.
  EXPECT_EQ(state(global("app", "Slotted") + ")" + newobj() + dict_of({str("a"), integer(1)}) +
                  dict_of({str("b"), integer(2)}) + tuple2() + build()),
            R"J({"::":"app.Slotted","a":1,"b":2})J");
  EXPECT_EQ(state(global("app", "Slotted") + ")" + newobj() + none() +
                  dict_of({str("b"), integer(2)}) + tuple2() + build()),
            R"J({"::":"app.Slotted","b":2})J");
}

TEST(PickleMapping, DictAndListSubclassInstances) {
  EXPECT_EQ(state(global("collections", "OrderedDict") + ")" + reduce() + mark() + str("x") +
                  integer(1) + str("y") + integer(2) + "u"),
            R"J({"::":"collections.OrderedDict","x":1,"y":2})J");
  EXPECT_EQ(state(global("app", "Tags") + ")" + newobj() + mark() + str("a") + str("b") + "e"),
            R"J({"::":"app.Tags","value":["a","b"]})J");
  // Protocols 0 and 1: copy_reg._reconstructor(cls, dict|list, items), then the attributes.
  EXPECT_EQ(state(global("copy_reg", "_reconstructor") +
                  tuple_of({global("mymod", "D"), global("__builtin__", "dict"),
                            dict_of({str("a"), integer(1)})}) +
                  reduce() + dict_of({str("x"), integer(5)}) + build()),
            R"J({"::":"mymod.D","x":5,"a":1})J");
  EXPECT_EQ(state(global("copy_reg", "_reconstructor") +
                  tuple_of({global("mymod", "L"), global("__builtin__", "list"),
                            list_of({integer(1), integer(2)})}) +
                  reduce() + dict_of({str("y"), integer(6)}) + build()),
            R"J({"::":"mymod.L","y":6,"value":[1,2]})J");
}

TEST(PickleMapping, GlobalAsAValue) {
  EXPECT_EQ(state(list_of({global("app.models", "Doc")})),
            R"J([{"::":"global","name":"app.models.Doc"}])J");
}

TEST(PickleMapping, SharedSubObjectsAreExpandedAgain) {
  // l = [1]; state = [l, l]: the second is a memo hit, not a cycle.
  EXPECT_EQ(state("]" + put(1) + integer(1) + "a" + get(1) + tuple2()), "[[1],[1]]");
}

TEST(PickleMapping, CyclesUseIds) {
  // l = []; l.append(l)
  EXPECT_EQ(state("]" + put(1) + get(1) + "a"),
            R"J({"::":"shared","::id":0,"value":[{"::->":0}]})J");
  // d = {}; d['self'] = d
  EXPECT_EQ(state("}" + put(1) + str("self") + get(1) + "s"), R"J({"::id":0,"self":{"::->":0}})J");
  // o = Node(); o.parent_of = [o]
  EXPECT_EQ(state(global("app", "Node") + ")" + newobj() + put(1) +
                  dict_of({str("kids"), list_of({get(1)})}) + build()),
            R"J({"::":"app.Node","::id":0,"kids":[{"::->":0}]})J");
}

TEST(PickleMapping, BTreesBucketAndTree) {
  const std::string bucket_state = tuple_of({integer(1), str("one"), integer(2), str("two")});
  DecodedRecord r = decode_record(record(bucket_state + tuple1(), "BTrees.IOBTree", "IOBucket"));
  EXPECT_EQ(r.json, R"J({"::items":{"1":"one","2":"two"}})J");
  // A bucket with a next bucket.
  r = decode_record(record(bucket_state + ref(9, "BTrees.IOBTree", "IOBucket") + tuple2(),
                           "BTrees.IOBTree", "IOBucket"));
  EXPECT_EQ(r.json, R"J({"::items":{"1":"one","2":"two"},"::next":)J"
                    R"J({"::":"persistent","id":[9,"BTrees.IOBTree.IOBucket"],"::=>":9}})J");
  EXPECT_EQ(r.refs, std::vector<Oid>{Oid(9)});
  // A small tree keeps its bucket inline: ((bucket_state,),)
  r = decode_record(
      record(bucket_state + tuple1() + tuple1() + tuple1(), "BTrees.IOBTree", "IOBTree"));
  EXPECT_EQ(r.json, R"J({"::items":{"1":"one","2":"two"}})J");
  // Keys that are neither str nor int: a list of pairs.
  r = decode_record(record(tuple_of({tuple_of({integer(1)}), str("v")}) + tuple1(),
                           "BTrees.OOBTree", "OOBucket"));
  EXPECT_EQ(r.json, R"J({"::items":[[[1],"v"]]})J");
  // Empty trees store None, empty buckets an empty tuple of items: both are null.
  r = decode_record(record(none(), "BTrees.OOBTree", "OOBTree"));
  EXPECT_EQ(r.json, "null");
  r = decode_record(record(tuple_of({}) + tuple1(), "BTrees.OOBTree", "OOBucket"));
  EXPECT_EQ(r.json, "null");
  // An empty set is a set (its row of json-mirror.md has no such rule).
  r = decode_record(record(tuple_of({}) + tuple1(), "BTrees.OOBTree", "OOSet"));
  EXPECT_EQ(r.json, R"J({"::keys":[]})J");
  // A big tree: children and the first bucket.
  r = decode_record(record(tuple_of({ref(3, "BTrees.LOBTree", "LOBucket"), integer(100),
                                     ref(4, "BTrees.LOBTree", "LOBucket")}) +
                               ref(3, "BTrees.LOBTree", "LOBucket") + tuple2(),
                           "BTrees.LOBTree", "LOBTree"));
  EXPECT_EQ(r.json,
            R"J({"::children":[{"::":"persistent","id":[3,"BTrees.LOBTree.LOBucket"],"::=>":3},)J"
            R"J(100,{"::":"persistent","id":[4,"BTrees.LOBTree.LOBucket"],"::=>":4}],)J"
            R"J("::first":{"::":"persistent","id":[3,"BTrees.LOBTree.LOBucket"],"::=>":3}})J");
}

// ZODB 3 named the C modules in class names: BTrees._OOBTree.OOBTree, BTrees._IOBTree.IOBucket.
TEST(PickleMapping, BTreesUnderZodb3ModuleNames) {
  const std::string bucket_state = tuple_of({integer(1), str("one"), integer(2), str("two")});
  DecodedRecord r = decode_record(record(bucket_state + tuple1(), "BTrees._IOBTree", "IOBucket"));
  EXPECT_EQ(r.json, R"J({"::items":{"1":"one","2":"two"}})J");
  r = decode_record(
      record(bucket_state + tuple1() + tuple1() + tuple1(), "BTrees._IOBTree", "IOBTree"));
  EXPECT_EQ(r.json, R"J({"::items":{"1":"one","2":"two"}})J");
  EXPECT_EQ(r.class_name, "BTrees._IOBTree.IOBTree");
}

TEST(PickleMapping, BTreesSets) {
  DecodedRecord r =
      decode_record(record(tuple_of({str("a"), str("b")}) + tuple1(), "BTrees.OOBTree", "OOSet"));
  EXPECT_EQ(r.json, R"J({"::keys":["a","b"]})J");
  r = decode_record(record(tuple_of({integer(1), integer(5)}) + tuple1() + tuple1() + tuple1(),
                           "BTrees.IIBTree", "IITreeSet"));
  EXPECT_EQ(r.json, R"J({"::keys":[1,5]})J");
  // A state that does not have the shape of its class is written as it is.
  r = decode_record(record(str("odd"), "BTrees.OOBTree", "OOSet"));
  EXPECT_EQ(r.json, R"J("odd")J");
}

TEST(PickleMapping, BTreesLengthIsAnInteger) {
  EXPECT_EQ(decode_record(record(integer(1062), "BTrees.Length", "Length")).json, "1062");
}

TEST(PickleMapping, PersistentMappingAndListAsStored) {
  EXPECT_EQ(decode_record(record(dict_of({str("data"), dict_of({str("k"), integer(1)})}))).json,
            R"J({"data":{"k":1}})J");
  EXPECT_EQ(decode_record(record(dict_of({str("data"), list_of({integer(1)})}), "persistent.list",
                                 "PersistentList"))
                .json,
            R"J({"data":[1]})J");
  // Old databases: PersistentMapping kept its dict in _container.
  EXPECT_EQ(decode_record(record(dict_of({str("_container"), dict_of({})}), "Persistence",
                                 "PersistentMapping"))
                .json,
            R"J({"_container":{}})J");
}

TEST(PickleMapping, ReplaceNulForJsonb) {
  DecodeOptions o;
  EXPECT_EQ(state(str(std::string("a\0b", 3)), o), R"J("a\u0000b")J");
  o.replace_nul = true;
  EXPECT_EQ(state(str(std::string("a\0b", 3)), o),
            "\"a\xef\xbf\xbd"
            "b\"");
}

}  // namespace
}  // namespace relstore
