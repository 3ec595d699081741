// Two-phase commit on PostgreSQL: binary COPY into temp_store, server-side lock-and-detect,
// and a finish that moves the rows and commits in the same round trip.
#pragma once

#include <memory>

#include "adapters/postgresql/adapter.h"
#include "adapters/postgresql/oid_allocator.h"

namespace relstore::postgresql {

// A write transaction costs two round trips: the vote sends BEGIN, the emptying of
// temp_store, the records as binary arrays and the lock-and-detect call in one pipeline
// (1); the finish sends the relstore_finish call and COMMIT in one message (2). A vote of
// more than 64 kB sends the COPY command instead and then the COPY data: one round trip
// more.
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
  // The vote's statements (empty temp_store by TRUNCATE or DELETE, upload, lock-and-detect
  // when `call`); their results.
  std::vector<Result> vote_pipelined(const backend::VoteRequest& req, bool truncate, bool call);
  std::vector<Result> vote_with_copy(const backend::VoteRequest& req, bool truncate, bool call);

  const Location& loc_;
  backend::Adapter& adapter_;
  std::unique_ptr<Conn> conn_;
  int oid_blocks_ = 1;               // blocks the next allocation takes (doubles up to 16)
  size_t bytes_since_truncate_ = 0;  // copied into temp_store since it was last truncated
  bool mirror_in_commit_ = false;    // the last vote found the JSON mirror in in-commit mode
};

// relstore_finish's parameters (forced TID, packed, user, description, extension), with
// which relstore_finish_mirror's begin.
void put_finish_params(const backend::FinishRequest& req, Params& p);

// Runs a finish call prepared on the store connection, which returns the TID, and COMMIT
// in one pipelined message: one round trip. The TID is read only once the COMMIT's result
// is in, so a returned TID is a committed one.
Tid finish_and_commit(Conn& conn, const Statement& finish, const Params& p);

}  // namespace relstore::postgresql
