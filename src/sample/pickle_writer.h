// A small protocol-3 pickle writer, enough to build ZODB records by hand: the class
// pickle and the state pickle of one record share a memo, as ZODB's one Pickler does.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace relstore::sample {

class PickleWriter {
 public:
  // PROTO 3; begins a pickle. The memo carries over from earlier pickles of this writer.
  void begin();
  // STOP; ends a pickle.
  void end();
  // Returns everything written so far and starts afresh (memo included).
  std::string take();

  // GLOBAL module\nname\n, memoized: the second use of a class is a BINGET.
  void global(std::string_view module, std::string_view name);
  void none();
  void boolean(bool v);
  void integer(int64_t v);
  void floating(double v);
  void unicode(std::string_view utf8);
  void bytes(std::string_view b);
  void empty_dict();
  void empty_list();
  void mark();
  void setitem();
  void setitems();  // pops to the mark: key, value, key, value, ...
  void appends();   // pops to the mark: items
  // A tuple of the top `n` values (n <= 3 uses TUPLE1..3, else MARK must precede).
  void tuple(size_t n);
  void persid();  // BINPERSID: the top value is the persistent id
  void reduce();  // REDUCE: callable, args tuple
  void newobj();  // NEWOBJ: class, args tuple

 private:
  void op(char c) { out_ += c; }
  void le32(uint32_t v);
  void memoize();

  std::string out_;
  uint32_t next_memo_ = 0;
  std::map<std::string, uint32_t, std::less<>> globals_;
};

// A datetime.datetime (naive) the way Python pickles it under protocol 3: the class, a
// 10-byte state, TUPLE1, REDUCE.
void write_datetime(PickleWriter& w, int year, int month, int day, int hour, int minute, int second,
                    int microsecond);

}  // namespace relstore::sample
