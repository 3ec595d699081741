// Protocol 0 and 1 records as Python 2 era ZODB databases hold them, assembled opcode by
// opcode: text opcodes (INT, LONG, FLOAT, STRING, UNICODE, PUT/GET, PERSID), INST and OBJ,
// Python 2 strings, dicts and lists built item by item.
#include <gtest/gtest.h>

#include <string>

#include "pickle_test_util.h"
#include "relstore/pickle.h"

namespace relstore {
namespace {

using namespace std::string_literals;
using testing::pk::be64;

// Protocol 0 class pickle as old ZODB wrote it: (GLOBAL, None).
const std::string kClass0 = "(cmyapp.content\nFolder\np0\nNtp1\n."s;

TEST(PickleLegacy, Protocol0ClassTupleAndTextScalars) {
  const std::string state =
      "(dp2\n"
      "S'title'\np3\nS'Front page'\np4\n"
      "sS'count'\np5\nI42\n"
      "sS'negative'\np6\nI-7\n"
      "sS'flag'\np7\nI01\n"
      "sS'off'\np8\nI00\n"
      "sS'big'\np9\nL123456789012345678901234567890L\n"
      "sS'small_long'\np10\nL5L\n"
      "sS'ratio'\np11\nF0.25\n"
      "sS'nothing'\np12\nN"
      "s."s;
  const DecodedRecord r = decode_record(kClass0 + state);
  EXPECT_EQ(r.class_name, "myapp.content.Folder");
  EXPECT_EQ(r.ghost_pickle, kClass0);
  EXPECT_EQ(
      r.json,
      R"J({"title":"Front page","count":42,"negative":-7,"flag":true,"off":false,)J"
      R"J("big":123456789012345678901234567890,"small_long":5,"ratio":0.25,"nothing":null})J");
}

TEST(PickleLegacy, StringEscapesAndUnicode) {
  // STRING is a Python 2 repr; UNICODE is raw-unicode-escape (Latin-1 bytes and \u escapes).
  const std::string state =
      "(dp1\n"
      "S'quote'\np2\nS'it\\'s \"x\"\\n'\np3\n"
      "sS'dq'\np4\nS\"a'b\"\np5\n"
      "sS'name'\np6\nVcaf\xe9 \\u20ac\np7\n"
      "sS'octal'\np8\nS'\\101\\102'\np9\n"
      "s."s;
  EXPECT_EQ(decode_record(kClass0 + state).json,
            "{\"quote\":\"it's \\\"x\\\"\\n\",\"dq\":\"a'b\",\"name\":\"caf\xc3\xa9 \xe2\x82\xac\","
            "\"octal\":\"AB\"}");
}

TEST(PickleLegacy, Python2NonAsciiStringsAreHexUnlessAsked) {
  const std::string state = "(dp1\nS'k'\np2\nS'caf\\xc3\\xa9'\np3\ns."s;
  EXPECT_EQ(decode_record(kClass0 + state).json, R"J({"k":{"::":"hex","hex":"636166c3a9"}})J");
  DecodeOptions o;
  o.py2_str = Py2StrMode::kUtf8;
  EXPECT_EQ(decode_record(kClass0 + state, o).json, "{\"k\":\"caf\xc3\xa9\"}");
}

TEST(PickleLegacy, ListAndDictBuiltItemByItem) {
  // Protocol 0: LIST from a mark, APPEND one by one, DICT from a mark.
  const std::string state =
      "(dp1\n"
      "S'list'\np2\n(lp3\nI1\naI2\na(I3\nI4\nlp4\na"
      "sS'dict'\np5\n(S'a'\np6\nI1\nS'b'\np7\nI2\ndp8\n"
      "sS'again'\np9\ng3\n"
      "s."s;
  EXPECT_EQ(decode_record(kClass0 + state).json,
            R"J({"list":[1,2,[3,4]],"dict":{"a":1,"b":2},"again":[1,2,[3,4]]})J");
}

TEST(PickleLegacy, Protocol1BinaryOpcodes) {
  // Protocol 1: EMPTY_DICT + SETITEMS, EMPTY_LIST + APPENDS, SHORT_BINSTRING, BINSTRING,
  // BININT, BINFLOAT, BINGET/BINPUT, LONG_BINPUT/LONG_BINGET.
  const std::string cls = "(cmyapp\nItem\nq\x00Ntq\x01."s;
  // (Literals are split where a hex escape is followed by a hex digit.)
  const std::string state =
      "}q\x02(U\x01"
      "aK\x01U\x01"
      "b]q\x03(K\x02M\x00\x01J\xff\xff\xff\xff"
      "e"
      "T\x03\x00\x00\x00tagr\x10\x00\x00\x00U\x03valU\x04"
      "copy"
      "j\x10\x00\x00\x00u."s;
  const DecodedRecord r = decode_record(cls + state);
  EXPECT_EQ(r.class_name, "myapp.Item");
  EXPECT_EQ(r.json, R"J({"a":1,"b":[2,256,-1],"tag":"val","copy":"tag"})J");
}

TEST(PickleLegacy, InstOpcode) {
  // INST: MARK args… INST module name; then BUILD with a dict.
  const std::string state = "(I1\nI2\nimyapp.geo\nPoint\np1\n(dp2\nS'label'\np3\nS'p'\nsb."s;
  EXPECT_EQ(decode_record(kClass0 + state).json,
            R"J({"::":"myapp.geo.Point","::()":[1,2],"label":"p"})J");
}

TEST(PickleLegacy, ObjOpcode) {
  // OBJ: MARK class args… OBJ
  const std::string state = "(cmyapp.geo\nPoint\nq\x02K\x01K\x02o}q\x03U\x01zK\x03sb."s;
  EXPECT_EQ(decode_record(kClass0 + state).json,
            R"J({"::":"myapp.geo.Point","::()":[1,2],"z":3})J");
}

TEST(PickleLegacy, CopyRegReconstructor) {
  // New-style class instances in protocols 0/1.
  const std::string state =
      "ccopy_reg\n_reconstructor\np2\n(cmyapp\nThing\np3\nc__builtin__\nobject\np4\nNtp5\nRp6\n"
      "(dp7\nS'x'\np8\nI1\nsb."s;
  EXPECT_EQ(decode_record(kClass0 + state).json, R"J({"::":"myapp.Thing","x":1})J");
}

TEST(PickleLegacy, PersistentIdText) {
  // PERSID with an 8-byte oid as its text line (no newline in the oid).
  const std::string state = "(dp1\nS'parent'\np2\nP"s + be64(0x1234) + "\nsS'other'\np3\nPabc\ns."s;
  const DecodedRecord r = decode_record(kClass0 + state);
  EXPECT_EQ(r.json, R"J({"parent":{"::":"persistent","id":4660,"::=>":4660},)J"
                    R"J("other":{"::":"persistent","id":"abc"}})J");
  EXPECT_EQ(r.refs, std::vector<Oid>{Oid(0x1234)});
  EXPECT_EQ(scan_references(kClass0 + state), r.refs);
}

TEST(PickleLegacy, Protocol1PersistentReferenceTuple) {
  // BINPERSID of (oid as SHORT_BINSTRING, class).
  const std::string state = "}q\x02U\x04nextq\x03(U\x08"s + be64(99) +
                            "q\x04"
                            "cmyapp\nItem\nq\x05tq\x06Qs."s;
  const DecodedRecord r = decode_record("(cmyapp\nItem\nq\x00Ntq\x01."s + state);
  EXPECT_EQ(r.json, R"J({"next":{"::":"persistent","id":[99,"myapp.Item"],"::=>":99}})J");
  EXPECT_EQ(r.refs, std::vector<Oid>{Oid(99)});
}

TEST(PickleLegacy, AnAsciiTextOidIsAReference) {
  // A Python 3 unpickling of Python 2 data gives a str oid; ZODB encodes it as ASCII
  // (referencesf), so it names the object as 8 bytes would, bare or in a tuple. Text that
  // is not ASCII names none.
  using namespace testing::pk;
  const std::string oid7 = std::string(7, '\0') + "\x07";
  const std::string oid8 = std::string(7, '\0') + "\x08";
  const std::string state = "}" + mark() + str("a") + str(oid8) + "Q" + str("b") + str(oid7) +
                            global("myapp", "Item") + op(0x86) + "Q" + str("c") +
                            str("\xc3\xa9" + std::string(6, '\0')) + "Q" + "u" + stop();
  const std::string cls = "(cmyapp\nItem\nq\x00Ntq\x01."s;
  const DecodedRecord r = decode_record(cls + state);
  EXPECT_EQ(r.json, R"J({"a":{"::":"persistent","id":8,"::=>":8},)J"
                    R"J("b":{"::":"persistent","id":[7,"myapp.Item"],"::=>":7},)J"
                    R"J("c":{"::":"persistent","id":")J"
                    "\xc3\xa9"
                    R"J(\u0000\u0000\u0000\u0000\u0000\u0000"}})J")
      << r.json;
  EXPECT_EQ(r.refs, (std::vector<Oid>{Oid(7), Oid(8)}));
  EXPECT_EQ(scan_references(cls + state), r.refs);
}

TEST(PickleLegacy, ZopeTwoClassNameTuple) {
  // ((module, name), None) class pickles of Zope 2 databases.
  const std::string cls =
      "((U\x0aOFS.FolderU\x06"
      "Folderq\x00tq\x01Ntq\x02."s;
  const DecodedRecord r = decode_record(cls + "}q\x03."s);
  EXPECT_EQ(r.class_name, "OFS.Folder.Folder");
  EXPECT_EQ(r.json, "{}");
}

TEST(PickleLegacy, Python2Datetime) {
  // datetime pickled by Python 2: the state is a Python 2 str.
  const std::string state =
      "cdatetime\ndatetime\nq\x02U\x0a\x07\xd0\x01\x02\x03\x04\x05\x00\x00\x01"
      "q\x03\x85q\x04Rq\x05."s;
  EXPECT_EQ(decode_record("(cmyapp\nItem\nq\x00Ntq\x01."s + state).json,
            R"J("2000-01-02T03:04:05.000001")J");
}

// Python 2 pickles a bytearray as bytearray(u'…', 'latin-1'), the encoding a byte string.
TEST(PickleLegacy, Python2Bytearray) {
  const std::string state =
      "\x80\x02"
      "c__builtin__\nbytearray\nX\x04\x00\x00\x00"
      "ab\xc3\xbfU\x07latin-1\x86R."s;
  EXPECT_EQ(decode_record("\x80\x02"
                          "cmyapp\nItem\n."s +
                          state)
                .json,
            R"J({"::":"hex","hex":"6162ff"})J");
}

TEST(PickleLegacy, Python3Protocol2BytesViaCodecs) {
  // Python 3 writes bytes in protocol 2 as _codecs.encode(text, 'latin1').
  const std::string payload = "X\x0b\x00\x00\x00\x07\xc3\xa8\x04\x09\x03\x27\x00\x00\x00\x00"s;
  const std::string state =
      "\x80\x02"
      "cdatetime\ndatetime\nq\x02"
      "c_codecs\nencode\nq\x03"s +
      payload + "X\x06\x00\x00\x00latin1\x86q\x04Rq\x05\x85q\x06Rq\x07."s;
  EXPECT_EQ(decode_record("\x80\x02"
                          "cmyapp\nItem\nq\x00."s +
                          state)
                .json,
            R"J("2024-04-09T03:39:00")J");
  const std::string raw =
      "\x80\x02"
      "c_codecs\nencode\nX\x02\x00\x00\x00\xc3\xbfX\x06\x00\x00\x00latin1\x86R."s;
  EXPECT_EQ(decode_record("\x80\x02"
                          "cmyapp\nItem\n."s +
                          raw)
                .json,
            R"J({"::":"hex","hex":"ff"})J");
}

}  // namespace
}  // namespace relstore
