#include "sample/records.h"

#include "sample/pickle_writer.h"

namespace relstore::sample {
namespace {

void class_pickle(PickleWriter& w, ClassName cls) {
  w.begin();
  w.global(cls.module, cls.name);
  w.end();
}

// A persistent reference as ZODB writes one for an ordinary persistent class:
// (oid bytes, class) as the persistent id.
void reference(PickleWriter& w, Oid oid, ClassName cls) {
  w.bytes(oid.bytes());
  w.global(cls.module, cls.name);
  w.tuple(2);
  w.persid();
}

void datetime(PickleWriter& w, const DateTime& t) {
  write_datetime(w, t.year, t.month, t.day, t.hour, t.minute, t.second, t.microsecond);
}

// Python pickles dict items in batches of 1000 with MARK ... SETITEMS (SETITEM for one).
template <class F>
void dict_items(PickleWriter& w, size_t n, F&& item) {
  for (size_t start = 0; start < n; start += 1000) {
    const size_t stop = std::min(n, start + 1000);
    if (stop - start == 1) {
      item(start);
      w.setitem();
      continue;
    }
    w.mark();
    for (size_t i = start; i < stop; ++i) item(i);
    w.setitems();
  }
}

}  // namespace

Bytes mapping_record(const std::vector<Child>& children) {
  PickleWriter w;
  class_pickle(w, kPersistentMapping);
  w.begin();
  w.empty_dict();
  w.unicode("data");
  w.empty_dict();
  dict_items(w, children.size(), [&](size_t i) {
    w.unicode(children[i].name);
    reference(w, children[i].oid, children[i].cls);
  });
  w.setitem();
  w.end();
  return w.take();
}

Bytes btree_record(const std::vector<Child>& children) {
  PickleWriter w;
  class_pickle(w, kOOBTree);
  w.begin();
  if (children.empty()) {
    w.none();
  } else {
    const size_t n = children.size() * 2;
    if (n > 3) w.mark();
    for (const Child& c : children) {
      w.unicode(c.name);
      reference(w, c.oid, c.cls);
    }
    w.tuple(n);  // the bucket's flat key/value items
    w.tuple(1);  // the bucket state
    w.tuple(1);  // the tree's one inline bucket
    w.tuple(1);  // the tree state
  }
  w.end();
  return w.take();
}

Bytes document_record(const Document& doc) {
  PickleWriter w;
  class_pickle(w, kDocument);
  w.begin();
  w.empty_dict();
  w.mark();
  w.unicode("title");
  w.unicode(doc.title);
  w.unicode("text");
  w.unicode(doc.text);
  w.unicode("created");
  datetime(w, doc.created);
  w.unicode("modified");
  datetime(w, doc.modified);
  w.unicode("tags");
  if (doc.tags_as_tuple) {
    if (doc.tags.size() > 3) w.mark();
    for (const auto& t : doc.tags) w.unicode(t);
    w.tuple(doc.tags.size());
  } else {
    w.empty_list();
    if (!doc.tags.empty()) {
      w.mark();
      for (const auto& t : doc.tags) w.unicode(t);
      w.appends();
    }
  }
  w.unicode("views");
  w.integer(doc.views);
  w.unicode("rating");
  w.floating(doc.rating);
  w.unicode("__parent__");
  reference(w, doc.parent, doc.parent_class);
  w.setitems();
  w.end();
  return w.take();
}

Bytes extension_bytes(const std::string& source, int64_t objects) {
  PickleWriter w;
  w.begin();
  w.empty_dict();
  w.mark();
  w.unicode("source");
  w.unicode(source);
  w.unicode("objects");
  w.integer(objects);
  w.setitems();
  w.end();
  return w.take();
}

}  // namespace relstore::sample
