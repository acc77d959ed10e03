// OrderTree (core/comms/order_tree.h) against a plain list under chains of
// moves into one gap, the pattern sink_waits_iterative makes (each wait sunk
// to just before the one it moved last) and its mirror: the order, labels
// that grow along it, and the key queries that read them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/comms/order_tree.h"

using namespace schedlab;
using comms_detail::OrderTree;

namespace {

struct Fixture {
  static constexpr std::int32_t kNodes = 600;
  Order order;
  std::vector<std::int64_t> alloc, freed;
  std::vector<double> compute;
  std::vector<std::uint8_t> role;
  Adjacency sources, dependents;  // every 4th node is keyed by the node 2 after it and the one 5 after it

  Fixture() : alloc(kNodes, 0), freed(kNodes, 0), compute(kNodes, 1.0), role(kNodes, 0) {
    std::vector<std::pair<std::int32_t, std::int32_t>> src, dep;
    for (NodeId v = 0; v < kNodes; ++v) {
      order.push_back(v);
      if (v % 4 != 0) continue;
      for (NodeId s : {v + 2, v + 5})
        if (s < kNodes) src.emplace_back(v, s), dep.emplace_back(s, v);
    }
    sources = Adjacency::from_pairs(kNodes, src);
    dependents = Adjacency::from_pairs(kNodes, dep);
  }
};

// The list's view: positions, and the first node at or after `from` whose
// key (its earliest source) comes before `x`.
std::int32_t first_keyed_before(const Order& list, const Adjacency& sources, std::int32_t from, NodeId x) {
  std::vector<std::int32_t> pos(list.size());
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(list.size()); ++i) pos[list[i]] = i;
  for (std::int32_t i = from; i < static_cast<std::int32_t>(list.size()); ++i)
    for (NodeId s : sources.row(list[i]))
      if (pos[s] < pos[x]) return i;
  return -1;
}

void check_same(const OrderTree& tree, const Order& list, const Adjacency& sources) {
  REQUIRE(tree.to_order() == list);
  for (std::size_t i = 1; i < list.size(); ++i) REQUIRE(tree.label(list[i - 1]) < tree.label(list[i]));
  for (NodeId x : {list[0], list[list.size() / 3], list[list.size() / 2], list.back()})
    for (std::int32_t from : {0, 100})
      CHECK(tree.first_match(from, tree.size() - 1, {.key_below = tree.label(x)}) == first_keyed_before(list, sources, from, x));
}

// Moves the node at `from` so that it lands at `to` (counted without it), in both.
void move(OrderTree& tree, Order& list, std::int32_t from, std::int32_t to) {
  tree.move_range(from, from, to);
  const NodeId v = list[from];
  list.erase(list.begin() + from);
  list.insert(list.begin() + to, v);
}

}  // namespace

TEST_CASE("order tree: a chain of moves, each just before the node moved last, keeps order, labels and keys", "[comms][order_tree]") {
  Fixture f;
  OrderTree tree(f.order, f.alloc, f.freed, f.compute, f.role, f.sources, f.dependents);
  Order list = f.order;
  // Sink the first node of the list to just before the one moved last, 500 times:
  // far more moves into one gap than halving it would allow without relabelling.
  move(tree, list, 0, 550);
  NodeId last = list[550];
  for (int i = 0; i < 500; ++i) {
    const auto at = static_cast<std::int32_t>(std::find(list.begin(), list.end(), last) - list.begin());
    move(tree, list, 0, at - 1);
    REQUIRE(list[at] == last);
    last = list[at - 1];
    if (i % 50 == 0) check_same(tree, list, f.sources);
  }
  check_same(tree, list, f.sources);
}

TEST_CASE("order tree: a chain of moves, each just after the node moved last, keeps order, labels and keys", "[comms][order_tree]") {
  Fixture f;
  OrderTree tree(f.order, f.alloc, f.freed, f.compute, f.role, f.sources, f.dependents);
  Order list = f.order;
  // Raise the last node of the list to just after the one moved last, 500 times.
  const std::int32_t end = Fixture::kNodes - 1;
  move(tree, list, end, 40);
  NodeId last = list[40];
  for (int i = 0; i < 500; ++i) {
    const auto at = static_cast<std::int32_t>(std::find(list.begin(), list.end(), last) - list.begin());
    move(tree, list, end, at + 1);
    REQUIRE(list[at] == last);
    last = list[at + 1];
    if (i % 50 == 0) check_same(tree, list, f.sources);
  }
  check_same(tree, list, f.sources);
}
