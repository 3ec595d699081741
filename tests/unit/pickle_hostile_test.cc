// Hostile and broken input: every case must end in a PickleError (naming the byte offset
// and opcode) or in bounded output, never in a crash, a hang or unbounded memory.
#include <gtest/gtest.h>
#include <pthread.h>
#include <ucontext.h>

#include <string>
#include <vector>

#include "pickle_test_util.h"
#include "relstore/pickle.h"

namespace relstore {
namespace {

using namespace std::string_literals;
using namespace testing::pk;

// Decodes, expecting a PickleError whose message contains `needle`; returns the error.
PickleError expect_error(const std::string& record, const std::string& needle) {
  try {
    decode_record(record);
  } catch (const PickleError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("pickle error at byte"), std::string::npos) << e.what();
    return e;
  }
  ADD_FAILURE() << "no PickleError for a record of " << record.size() << " bytes";
  return PickleError("", 0, -1);
}

TEST(PickleHostile, EveryTruncationIsAnError) {
  const std::string full =
      record(dict_of({str("k"), list_of({integer(1), binfloat(2.5), ref(7, "app", "A")})}));
  for (size_t n = 0; n < full.size(); ++n) {
    EXPECT_THROW(decode_record(full.substr(0, n)), PickleError) << "prefix of " << n << " bytes";
    EXPECT_THROW(scan_references(full.substr(0, n)), PickleError) << "prefix of " << n;
  }
  EXPECT_NO_THROW(decode_record(full));
}

TEST(PickleHostile, UnknownOpcodeNamesOffsetAndOpcode) {
  const std::string cls = class_pickle("app", "A");
  const PickleError e = expect_error(cls + proto(3) + "\xff"s + stop(), "unknown opcode");
  EXPECT_EQ(e.offset(), cls.size() + 2);
  EXPECT_EQ(e.opcode(), 0xff);
  EXPECT_NE(std::string(e.what()).find("opcode 0xff"), std::string::npos);
}

// Class names are text: bytes that are not UTF-8, or a NUL, make the record undecodable
// rather than a class_name no text column can hold.
TEST(PickleHostile, AClassNameThatIsNotTextIsAnError) {
  for (const std::string& module : {std::string("my\xff"
                                                "app"),
                                    std::string("my\0app", 6)}) {
    const std::string rec = proto(3) + global(module, "G") + stop() + proto(3) + none() + stop();
    EXPECT_THROW(decode_record(rec), PickleError);
  }
  EXPECT_EQ(
      decode_record(proto(3) + global("caf\xc3\xa9", "G") + stop() + proto(3) + none() + stop())
          .class_name,
      "caf\xc3\xa9.G");
}

TEST(PickleHostile, UnsupportedProtocol) {
  expect_error(record(proto(6) + none()), "unsupported protocol");
}

TEST(PickleHostile, DeepNestingIsAnError) {
  std::string ops;
  for (int i = 0; i < 5000; ++i) ops += "]";
  for (int i = 0; i < 4999; ++i) ops += "a";
  expect_error(record(ops), "nested deeper than 1000");
  // 999 levels are fine.
  ops.clear();
  for (int i = 0; i < 999; ++i) ops += "]";
  for (int i = 0; i < 998; ++i) ops += "a";
  EXPECT_NO_THROW(decode_record(record(ops)));
}

// Decodes `rec` on a thread whose stack has `stack_bytes`: "decoded" or the error message.
std::string decode_on_thread(const std::string& rec, size_t stack_bytes) {
  struct Run {
    const std::string* rec;
    std::string outcome;
  } run{&rec, ""};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack_bytes);
  pthread_t thread;
  auto body = [](void* arg) -> void* {
    auto* r = static_cast<Run*>(arg);
    try {
      decode_record(*r->rec);
      r->outcome = "decoded";
    } catch (const PickleError& e) {
      r->outcome = e.what();
    }
    return nullptr;
  };
  EXPECT_EQ(pthread_create(&thread, &attr, body, &run), 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  return run.outcome;
}

// Within the depth limit, nesting through instances takes more stack per level than
// through lists (about 480 bytes): 999 datetimes nested as each other's tzinfo need some
// 460 KiB. On a thread with a smaller stack that is an error, not a crash; so are lists
// nested 900 deep on a 64 KiB stack.
TEST(PickleHostile, DeepNestingOnASmallStackIsAnError) {
  std::string ops;
  for (int i = 0; i < 999; ++i) {
    ops += global("datetime", "datetime") + bytes("\x07\xe8\x04\x09\x03\x27\0\0\0\0"s);
  }
  ops += none();
  for (int i = 0; i < 999; ++i) ops += tuple2() + reduce();
  const std::string datetimes = record(ops);
  EXPECT_NE(decode_on_thread(datetimes, 256 * 1024).find("stack"), std::string::npos);
  EXPECT_NO_THROW(decode_record(datetimes));  // the main thread's stack holds it
  const std::string lists = record(std::string(900, ']') + std::string(899, 'a'));
  EXPECT_NE(decode_on_thread(lists, 64 * 1024).find("stack"), std::string::npos);
  EXPECT_EQ(decode_on_thread(lists, 1024 * 1024), "decoded");
}

// Code running on a stack of its own (a coroutine, a fiber) is not judged by its thread's
// stack: decoding there works, and hostile nesting is an error within a budget counted
// from where the decode began (the coroutine's stack size is unknown).
ucontext_t g_caller, g_coroutine;
const std::string* g_coroutine_record = nullptr;
std::string g_coroutine_outcome;
void decode_in_coroutine() {
  try {
    decode_record(*g_coroutine_record);
    g_coroutine_outcome = "decoded";
  } catch (const PickleError& e) {
    g_coroutine_outcome = e.what();
  }
}

std::string decode_on_coroutine(const std::string& rec, size_t stack_bytes) {
  std::vector<char> stack(stack_bytes);
  g_coroutine_record = &rec;
  g_coroutine_outcome.clear();
  EXPECT_EQ(getcontext(&g_coroutine), 0);
  g_coroutine.uc_stack.ss_sp = stack.data();
  g_coroutine.uc_stack.ss_size = stack.size();
  g_coroutine.uc_link = &g_caller;
  makecontext(&g_coroutine, decode_in_coroutine, 0);
  EXPECT_EQ(swapcontext(&g_caller, &g_coroutine), 0);
  return g_coroutine_outcome;
}

TEST(PickleHostile, ADecodeOnACoroutinesOwnStackWorks) {
#if defined(__SANITIZE_ADDRESS__)
  // ASan warns that it does not support swapcontext and that false reports may follow;
  // they did (a stack-buffer-overflow inside its own stack bookkeeping). The plain build
  // runs this test in CI.
  GTEST_SKIP() << "AddressSanitizer does not support makecontext/swapcontext";
#endif
  EXPECT_EQ(decode_on_coroutine(record("]]]aa"), 1 << 20), "decoded");
  std::string ops;
  for (int i = 0; i < 999; ++i) {
    ops += global("datetime", "datetime") + bytes("\x07\xe8\x04\x09\x03\x27\0\0\0\0"s);
  }
  ops += none();
  for (int i = 0; i < 999; ++i) ops += tuple2() + reduce();
  EXPECT_NE(decode_on_coroutine(record(ops), 128 * 1024).find("stack"), std::string::npos);
}

// Sets are sorted by their members' JSON, so each set's text is rewritten once it is
// written; sets nested in sets around one large member (a few kilobytes the memo expands
// to megabytes) rewrote it once per level: 975 levels of 16 MB took seconds for a 6 kB
// record. That work is bounded like the output.
TEST(PickleHostile, NestedSetsAroundALargeMemberAreBounded) {
  constexpr int kLevels = 975;
  std::string ops(kLevels, '(');
  ops += "]" + mark() + str(std::string(2000, 'a')) + "e" + "q" + op(0);  // [s], memo 0
  for (uint8_t k = 0; k < 13; ++k) {  // [L, L]: twice as long each time
    ops += "0]" + mark() + "h" + op(k) + "h" + op(k) + "e" + "q" + op(k + 1);
  }
  for (int i = 0; i < kLevels; ++i) ops += "K" + op(static_cast<uint8_t>(i)) + op(0x91);
  const std::string rec = class_pickle("app", "Holder") + proto(4) + ops + stop();
  try {
    decode_record(rec);
    FAIL() << "decoded, after copying gigabytes";
  } catch (const PickleError& e) {
    EXPECT_NE(std::string(e.what()).find("sets"), std::string::npos) << e.what();
  }
}

TEST(PickleHostile, HugeLengthsAreErrors) {
  expect_error(record("X\xff\xff\xff\xff"
                      "abc"s),
               "truncated");
  expect_error(record(op(0x8e) + le(~0ULL, 8) + "abc"), "truncated");
  expect_error(record(op(0x8d) + le(1ULL << 62, 8)), "truncated");
  expect_error(record("T\xff\xff\xff\xff"s), "negative BINSTRING length");
  expect_error(record(op(0x95) + le(1ULL << 40, 8) + none()), "frame runs past the record");
  expect_error(record(op(0x8b) + le(0x7fffffff, 4)), "integer longer than 10000 digits");
}

TEST(PickleHostile, LongIntegerLimit) {
  const std::string digits(10000, '7');
  EXPECT_NO_THROW(decode_record(record("L" + digits + "L\n")));
  expect_error(record("L" + digits + "7L\n"), "integer longer than 10000 digits");
  // LONG4 of 4153 bytes can still have more than 10000 digits: caught when written.
  std::string b(4153, '\xff');
  b.back() = 0x7f;
  expect_error(record(op(0x8b) + le(b.size(), 4) + b), "integer longer than 10000 digits");
}

TEST(PickleHostile, BigIntegerBudgetPerRecord) {
  // Decimal conversion is quadratic: 16 integers of 4 KB (about the largest) are allowed,
  // a 17th is not.
  std::string b(4096, '\x11');
  std::string ops = mark();
  for (int i = 0; i < 16; ++i) ops += op(0x8b) + le(b.size(), 4) + b;
  EXPECT_NO_THROW(decode_record(record(ops + "t")));
  expect_error(record(ops + op(0x8b) + le(b.size(), 4) + b + "t"),
               "big integers in one record too long to write in decimal");
}

// One large integer memoized and fetched a thousand times: converted to decimal once, not
// at every use (the walker's budget counts it once; at ~2 ms a conversion, a 6 KB record
// took seconds), and every use writes the same digits.
TEST(PickleHostile, AMemoizedBigIntegerIsConvertedOnce) {
  std::string b(4096, '\x11');
  std::string ops = mark() + op(0x8b) + le(b.size(), 4) + b + put(1);
  for (int i = 0; i < 999; ++i) ops += get(1);
  const std::string json = decode_record(record(ops + "l")).json;
  const std::string one = decode_record(record(op(0x8b) + le(b.size(), 4) + b)).json;
  ASSERT_GT(one.size(), 9000u);
  std::string expected = "[";
  for (int i = 0; i < 1000; ++i) expected += (i ? "," : "") + one;
  EXPECT_EQ(json, expected + "]");
}

// Many small big integers (UUIDs as ints: 16 bytes each) cost little and always decode.
TEST(PickleHostile, ManySmallBigIntegersDecode) {
  const std::string b(16, '\x5a');
  std::string ops = mark();
  for (int i = 0; i < 20000; ++i) ops += op(0x8a) + std::string(1, '\x10') + b;
  const auto r = decode_record(record(ops + "l"));
  EXPECT_EQ(r.json.front(), '[');
}

// Shared sub-objects are written at every use: a small record may expand to megabytes.
TEST(PickleHostile, ASmallRecordMayExpandToMegabytes) {
  // d = {40 keys of 20-character values}; [d] * 2000, d memoized and fetched again.
  std::string d = "}" + put(1) + mark();
  for (int k = 0; k < 40; ++k) {
    d += str("key" + std::to_string(k)) + str(std::string(20, 'v'));
  }
  d += "u";
  std::string ops = mark() + d;
  for (int i = 1; i < 2000; ++i) ops += get(1);
  const auto r = decode_record(record(ops + "l"));
  EXPECT_GT(r.json.size(), 2000000u);
}

TEST(PickleHostile, MemoAbuse) {
  expect_error(record(get(9)), "memo key 9 was never stored");
  expect_error(record(none() + "r" + le(0xffffffff, 4)), "over the limit");
  expect_error(record(none() + "p99999999999999999999\n"), "bad memo key");
  expect_error(record(none() + "p-1\n"), "bad memo key");
  // A key below the record size is fine even when sparse.
  EXPECT_NO_THROW(decode_record(record(none() + put(50) + "0" + get(50)) + std::string(60, '.')));
}

TEST(PickleHostile, StackAbuse) {
  expect_error(record("a"), "stack underflow");
  expect_error(record(""), "stack underflow");  // STOP with nothing to return
  expect_error(record(integer(1) + "e"), "no MARK");
  expect_error(record("]" + mark() + "1" + "e"), "no MARK");
  expect_error(record(mark() + "e"), "no object below the MARK");
  expect_error(record(integer(1) + mark() + "a"), "stack underflow");
  expect_error(record(mark() + integer(1) + "d"), "odd number");
  expect_error(record(integer(1) + integer(2) + "a"), "APPEND to a value that is not a list");
  expect_error(record(integer(1) + integer(2) + integer(3) + "s"), "not a dict");
  expect_error(record(integer(1) + integer(2) + "b"), "BUILD on a value that is not an object");
  expect_error(record(mark() + op(0x92)), "stack underflow");
  expect_error(record(integer(1) + integer(2) + op(0x93)), "STACK_GLOBAL needs two str values");
}

TEST(PickleHostile, MalformedText) {
  expect_error(record("Sabc\n"), "not quoted");
  expect_error(record("S'abc\n"), "not quoted");
  expect_error(record("S'a\\x4g'\n"), "invalid \\x escape");
  expect_error(record("S'a\\x4'\n"), "truncated \\x escape");
  expect_error(record("S'a\\'\n"), "trailing backslash");
  expect_error(record("Vbad\\u12\n"), "truncated \\u escape");
  expect_error(record("V\\U00110000\n"), "beyond U+10FFFF");
  expect_error(record("I12x\n"), "bad integer text");
  expect_error(record("Fone\n"), "bad float text");
  expect_error(record("cmodule-without-newline"), "without newline");
}

TEST(PickleHostile, RecordStructure) {
  expect_error(class_pickle("app", "A"), "no state pickle");
  expect_error(proto(3) + none() + stop() + proto(3) + none() + stop(), "does not name a class");
  expect_error(proto(3) + global("app", "A"), "pickle ends without STOP");
  expect_error("", "pickle ends without STOP");
}

// Every cycle marker {"::->": n} points at a value written with "::id": n, also when
// marking a target changes how it is written (a set that contains itself becomes a
// generic instance, whose arguments lead the walk to another target).
TEST(PickleHostile, EveryCycleMarkerHasItsTarget) {
  const std::string rec =
      "\x80\x03"
      "cmyapp\nG\nq\x00N\x86q\x01."
      "\x80\x03"
      "cbuiltins\nset\n"
      "]q\x10"
      "]q\x11"
      "a\x85R"
      "q\x12"
      "h\x11"
      "h\x12"
      "a"
      "h\x10"
      "a0."s;
  const std::string json = decode_record(rec).json;
  for (size_t at = json.find(R"("::->":)"); at != std::string::npos;
       at = json.find(R"("::->":)", at + 1)) {
    const size_t digits = at + 7;
    const std::string id = json.substr(digits, json.find('}', digits) - digits);
    EXPECT_NE(json.find(R"("::id":)" + id + ","), std::string::npos) << id << " in " << json;
  }
}

TEST(PickleHostile, CyclesDoNotLoop) {
  // A list that contains itself twice, a dict in a list in itself, an object in its state.
  EXPECT_EQ(json_of("]" + put(1) + mark() + get(1) + get(1) + "e"),
            R"J({"::":"shared","::id":0,"value":[{"::->":0},{"::->":0}]})J");
  EXPECT_EQ(json_of("}" + put(1) + str("l") + "]" + put(2) + get(1) + "a" + "s"),
            R"J({"::id":0,"l":[{"::->":0}]})J");
  // Two cycles through each other.
  EXPECT_EQ(json_of("]" + put(1) + "]" + put(2) + get(1) + "a" + "a" + get(2) + get(1) + "a" + "0"),
            R"J({"::":"shared","::id":0,"value":[[{"::->":0},{"::->":0}]]})J");
}

TEST(PickleHostile, SharedExpansionIsBounded) {
  // l0 = [1]; l1 = [l0, l0]; …: 40 doublings would be 2^40 values of output.
  std::string ops = "]" + put(0) + integer(1) + "a";
  for (int i = 1; i <= 40; ++i) {
    ops += "]" + put(i) + mark() + get(i - 1) + get(i - 1) + "e";
  }
  expect_error(record(ops), "JSON text over the limit");
  DecodeOptions o;
  o.max_output_bytes = 100;
  EXPECT_THROW(decode_record(record(list_of({str(std::string(200, 'x'))})), o), PickleError);
}

TEST(PickleHostile, ErrorsAreStorageErrors) {
  try {
    decode_record("garbage");
    FAIL();
  } catch (const StorageError& e) {
    EXPECT_FALSE(e.retryable());
  }
}

}  // namespace
}  // namespace relstore
