// core/comms/bucketing — merging collectives into buckets (docs/comms.md,
// "Bucketing").
//
// A bucket is several all-gathers, reduce-scatters or all-reduces of one
// kind, group and dtype issued as one collective on one flat buffer: a
// copy-in kernel packs the members' inputs, one collective moves them, a
// copy-out kernel unpacks the results (Inductor's bucket_all_gather /
// bucket_reduce_scatter / bucket_all_reduce, XLA's combiners). It saves the
// collective's fixed latency per member, paid for with the copies and the
// staging buffers' bytes.
//
// Two ways to choose buckets, both pure functions of (CommGraph, order):
// * by the model (`bucket_collectives`): a bucket grows while merging one
//   more member still costs less than issuing it alone and the bucket's time
//   per byte still falls (past the size that saturates the link it stops
//   falling), and only while its staging bytes keep the order's memory at or
//   under the budget (XLA's combiner rule; default: the order's own peak);
//   the buckets are weighed in the order they closed (a few at a time on a
//   large graph) and kept where the simulated step gets no slower;
// * as Inductor 2.11 does (`bucket_collectives_inductor`): consecutive
//   collectives of one key in the order of their waits, greedily up to
//   2000 MB (max of input and output bytes) per bucket, a collective that
//   descends from the bucket's members skipped (greedy_bucket_collective_by_mb).
//
// Either way a collective joins no bucket it depends on through any chain of
// data dependencies (that would be a cycle), and a bucket is closed once a
// later bucket's member depends on it, so the merged graph has no cycle
// either. Fake weak deps (decide_global_ordering_of_comms' chain of
// collectives) only order: a bucket may cross them, as the iterative passes'
// unsafe reorders do (respects_comm_deps checks data deps).
// The bucketed order issues each bucket's members one after another where
// the last member stood, and moves what depended on the earlier members
// after them. Times: the first member carries the merged collective and the
// copy-in (on the communication stream: the copy delays the bucket), the
// other members none, and the first reader of any member's result carries
// the copy-out (on the compute stream).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/comms/comm_graph.h"
#include "core/cost/cost_model.h"

namespace schedlab {

// The keys Inductor groups by, as far as schedgraph/1 tells them: the
// collective's kind, its group's size (the format names no group) and its
// result's dtype.
struct BucketKey {
  CollectiveOp kind = CollectiveOp::AllGather;
  std::int64_t group_size = 1;
  std::string dtype;
  bool operator==(const BucketKey&) const = default;
};

struct CollectiveBucket {
  std::vector<NodeId> members;  // in issue order
  BucketKey key;
  std::int64_t bytes = 0;             // the members' payloads, summed (the format's payload: output bytes)
  std::int64_t copy_in_bytes = 0;     // the flat input the copy-in writes
  std::int64_t copy_out_bytes = 0;    // the flat output the copy-out reads
  std::int64_t extra_live_bytes = 0;  // staging buffers live beside the order's own (copy_in + copy_out)
  double separate_us = 0;             // the members' collectives issued one by one, summed
  double collective_us = 0;           // the merged collective
  double copy_in_us = 0, copy_out_us = 0;
  NodeId first_reader = kNone;        // the first node (in the bucketed order) that reads a member's result
  double bucketed_us() const { return collective_us + copy_in_us + copy_out_us; }
};

enum class BucketMode : std::uint8_t { Model, Inductor };

// The kinds that are bucketed, in the order the passes and the caps take
// them (BucketOptions::inductor_cap_mb is indexed so).
inline constexpr std::array<CollectiveOp, 3> kBucketKinds{CollectiveOp::AllGather, CollectiveOp::ReduceScatter,
                                                          CollectiveOp::AllReduce};

struct BucketOptions {
  BucketMode mode = BucketMode::Model;
  // Inductor mode: a bucket's cap in MiB (of its larger flat buffer) per
  // kind of kBucketKinds: all_gather, reduce_scatter, all_reduce (the FX passes' size
  // determinators; the knobs bucket_*_fx_bucket_cap_mib). Inductor's
  // default determinator is 2000 for every bucket.
  std::array<double, 3> inductor_cap_mb{2000.0, 2000.0, 2000.0};
  std::int64_t memory_budget = -1;     // bytes; -1: the order's own peak (model mode)
  bool keep_only_if_faster = true;     // model mode: weigh the buckets by the simulated step
};

// Which collectives may be bucketed: all-gathers, reduce-scatters and
// all-reduces (in-place ones too in model mode; Inductor's functional ops
// only, as its passes match them, in Inductor mode).
bool bucketable(const Graph& g, NodeId v, BucketMode mode);
BucketKey bucket_key(const Graph& g, NodeId v);

// What a bucket's merged collective and its copies cost on `hw`: its
// collective model (the measured curves where the profile has them) and the
// roofline of a copy that reads and writes the bytes. The plan hands these to
// the comm passes; a CommGraph without prices is priced on the default profile.
std::shared_ptr<CollectivePrices> collective_prices(const Graph& g, const HardwareProfile& hw);
std::shared_ptr<CollectivePrices> collective_prices(std::int64_t world_size, const HardwareProfile& hw);

// The flat buffers a member of `payload` bytes adds to its bucket: all_gather
// the shard in and the gathered tensor out; reduce_scatter the full tensor
// in and the shard out; all_reduce the tensor both ways.
struct StagingBytes {
  std::int64_t in = 0, out = 0;
};
StagingBytes staging_bytes(CollectiveOp kind, std::int64_t payload, std::int64_t group_size);

// The largest bucket the model still gains from, per kind, before any graph
// is seen (`schedlab bucket-caps`; schedlab_export.apply hands it to
// Inductor's FX bucketing passes as their size determinator, which fill
// buckets greedily up to it). A bucket of B bytes is worth it when two
// members of B/2 issued apart cost more than the bucket:
//   2 x (collective(B/2) + host per issue)
//     > collective(B) + host per issue + copy-in(B) + copy-out(B) + 2 x host per kernel,
// every term from the profile (its collective curves or datasheet model,
// the copies' roofline, its host terms: zero where it has none). Small
// members gain the collective's fixed latency and the host's issue; large
// ones pay more for the copies than the link saves, so the gain ends at a
// size: the cap is the largest size of a grid (128 KiB to 16 GiB, steps of
// sqrt 2) below which every size gains. Exposed or not, the copies run:
// the rule prices the pair as if nothing overlapped.
struct BucketCap {
  CollectiveOp kind = CollectiveOp::AllGather;
  std::int64_t group_size = 1;
  std::int64_t payload_bytes = 0;   // the cap (the format's payload: output bytes); 0: no size gains
  std::int64_t inductor_bytes = 0;  // the same bucket as Inductor sizes one: its larger flat buffer
  double separate_us = 0;           // at the cap: the two halves issued apart
  double merged_us = 0;             // at the cap: the bucket, its copies and their launches
};
std::vector<BucketCap> bucket_caps(const HardwareProfile& hw, std::int64_t group_size);

// The buckets of `order` (each of two members or more), in the order they
// close.
std::vector<CollectiveBucket> plan_buckets(const CommGraph& cg, const Order& order, const BucketOptions& opts);

// `order` with each bucket's members issued together where its last member
// stood, and what depended on the earlier members after them; fills each
// bucket's first_reader. A topological order of cg whenever no member
// depends on another member of its bucket.
Order order_with_buckets(const CommGraph& cg, const Order& order, std::vector<CollectiveBucket>& buckets);

// Per-node times with the buckets: `runtime_us` with each bucket's first
// member carrying collective_us + copy_in_us, its other members 0, and its
// first reader copy_out_us more.
std::vector<double> bucketed_runtimes(std::vector<double> runtime_us, const std::vector<CollectiveBucket>& buckets);

}  // namespace schedlab
