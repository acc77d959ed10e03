// GroupOrder (the fuser's topological order of the current nodes) against a
// plain list: random moves next to an anchor and replacements, with gaps
// small enough that renumbering happens, must keep the labels in the list's
// order.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "core/fusion/group_order.h"

using schedlab::fusion_detail::GroupOrder;
using Id = GroupOrder<>::Id;

TEST_CASE("GroupOrder keeps its labels in the order of a plain list under moves and replacements", "[fusion][oracle]") {
  std::mt19937 rng(56);
  for (int trial = 0; trial < 30; ++trial) {
    std::vector<Id> list;
    for (Id id = 0; id < 40 + static_cast<Id>(rng() % 60); ++id) list.push_back(id);
    std::shuffle(list.begin(), list.end(), rng);
    GroupOrder<> order;
    order.reset(list);
    Id next_id = static_cast<Id>(list.size());
    for (int step = 0; step < 3000 && list.size() > 1; ++step) {
      // Half the steps use the first node, whose gaps then shrink fast.
      const std::size_t at = rng() % 2 ? 0 : rng() % list.size();
      const Id anchor = list[at];
      if (rng() % 20 == 0) {
        // Replace the anchor and drop another node.
        std::size_t drop = rng() % list.size();
        if (drop == at) continue;
        const Id dropped = list[drop];
        list[at] = next_id;
        list.erase(list.begin() + static_cast<std::ptrdiff_t>(drop));
        order.replace(anchor, dropped, next_id++);
      } else {
        // Move a few other nodes (in label order) next to the anchor: many
        // moves into one spot use up its gap, which forces renumbering.
        std::vector<Id> moved;
        const unsigned one_in = at == 0 ? static_cast<unsigned>(list.size()) : 4;
        for (Id id : list)
          if (id != anchor && rng() % one_in == 0) moved.push_back(id);
        const bool after = rng() % 2 == 0;
        std::vector<Id> rest;
        for (Id id : list)
          if (std::find(moved.begin(), moved.end(), id) == moved.end()) rest.push_back(id);
        auto pos = std::find(rest.begin(), rest.end(), anchor) + (after ? 1 : 0);
        rest.insert(pos, moved.begin(), moved.end());
        list = rest;
        if (after) order.move_after(anchor, moved);
        else order.move_before(anchor, moved);
      }
      for (std::size_t i = 1; i < list.size(); ++i) REQUIRE(order.label(list[i - 1]) < order.label(list[i]));
    }
  }
}
