// Two-phase commit on PostgreSQL: binary COPY into temp_store, server-side lock-and-detect,
// and a finish that moves the rows and commits in the same round trip.
#pragma once

#include <memory>

#include "adapters/postgresql/adapter.h"
#include "adapters/postgresql/oid_allocator.h"

namespace relstore::postgresql {

// A write transaction costs two round trips: the vote sends BEGIN and the lock-and-detect
// call with the records' OIDs and serials in one pipeline (1); the finish sends the
// relstore_finish call with the records as binary arrays and COMMIT in one message (2).
// A vote of more than 64 kB copies the records into temp_store instead (binary COPY), one
// round trip more, and the calls read them from there.
class PgStoreConnection : public backend::StoreConnection {
 public:
  PgStoreConnection(const Location& loc, backend::Adapter& adapter);
  ~PgStoreConnection() override;

  std::vector<backend::ConflictRow> vote(const backend::VoteRequest& req) override;
  void replace(std::span<const backend::PendingRecord> records) override;
  Tid finish(const backend::FinishRequest& req) override;
  void rollback() noexcept override;
  std::vector<Oid> allocate_oids() override;
  void set_min_oid(Oid oid) override;
  bool healthy() const override { return conn_ && conn_->ok(); }
  std::optional<bool> mirror_in_commit() const override { return mirror_in_commit_; }

 private:
  // Replaces a connection the server closed while it sat in the pool (nothing of a
  // transaction is on the server yet when this is called).
  void ensure_open();
  std::vector<backend::ConflictRow> try_vote(const backend::VoteRequest& req);
  // The vote's statements (with the COPY: upload into temp_store; lock-and-detect when
  // `call`); their results.
  std::vector<Result> vote_pipelined(const backend::VoteRequest& req, bool call);
  std::vector<Result> vote_with_copy(const backend::VoteRequest& req, bool call);
  // Writes the vote's blobs into new large objects of the vote's transaction.
  void upload_blobs(std::span<const backend::PendingBlob> blobs);

  const Location& loc_;
  backend::Adapter& adapter_;
  std::unique_ptr<Conn> conn_;
  int oid_blocks_ = 1;             // blocks the next allocation takes (doubles up to 16)
  bool staged_ = false;            // the last vote copied its records into temp_store
  bool temp_store_used_ = false;   // temp_store has rows of an earlier vote (to truncate)
  bool mirror_in_commit_ = false;  // the last vote found the JSON mirror in in-commit mode
  std::vector<std::pair<Oid, int64_t>> blob_los_;  // the vote's blobs: object, large object
};

// relstore_finish's parameters, with which relstore_finish_mirror's begin: forced TID,
// packed, user, description, extension, and the records as arrays (zoids, md5s, states),
// or three NULLs when the vote copied them into temp_store (`staged`).
class FinishParams {
 public:
  FinishParams(const backend::FinishRequest& req, bool staged);
  FinishParams(const FinishParams&) = delete;  // the parameters point into the arrays
  FinishParams& operator=(const FinishParams&) = delete;
  Params& params() { return p_; }
  // The blob_chunk rows the commit adds: (object, large object) pairs, or none.
  void set_blobs(const std::vector<std::pair<Oid, int64_t>>& large_objects, bool keep_history);
  const Statement* blob_statement() const { return blob_statement_; }
  const Params& blob_params() const { return blob_p_; }

 private:
  BinaryArray zoids_{BinaryArray::kInt8}, md5s_{BinaryArray::kText};
  BinaryArray states_{BinaryArray::kBytea};
  Params p_;
  BinaryArray blob_zoids_{BinaryArray::kInt8}, blob_los_{BinaryArray::kInt8};
  const Statement* blob_statement_ = nullptr;
  Params blob_p_;
};

// Runs a finish call prepared on the store connection, which returns the TID, and COMMIT
// in one pipelined message: one round trip. The TID is read only once the COMMIT's result
// is in, so a returned TID is a committed one.
// With blobs, their blob_chunk rows go in between (after the call has written the objects'
// rows, whose TID they take).
Tid finish_and_commit(Conn& conn, const Statement& finish, FinishParams& f);

}  // namespace relstore::postgresql
