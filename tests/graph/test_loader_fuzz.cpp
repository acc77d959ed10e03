// Damaged fixtures never crash or hang the loader: every truncation and a
// few thousand byte flips either load or throw schedlab::Error.
#include <catch2/catch.hpp>

#include <random>

#include "core/memory/methods.h"
#include "core/util/error.h"
#include "tests/test_util.h"

using namespace schedlab;

TEST_CASE("truncated and corrupted graphs are refused cleanly", "[graph][loader][fuzz]") {
  const std::string text = read_text_file(test::data_path("inductor/fsdp_1.post.json"));
  std::size_t refused = 0, loaded = 0;
  auto attempt = [&](const std::string& t) {
    try {
      Graph g = load_graph(t);
      // Whatever loads must also plan.
      (void)reorder_for_peak_memory(g, g.baseline_order(), default_memory_methods());
      ++loaded;
    } catch (const Error&) {
      ++refused;
    }
  };
  for (std::size_t cut = 0; cut < text.size(); cut += 97) attempt(text.substr(0, cut));
  std::mt19937 rng(7);
  const std::string junk = "{}[]\",:0-9.e\\ \x01tfn";
  for (int i = 0; i < 3000; ++i) {
    std::string t = text;
    for (int k = 0; k < 3; ++k) t[rng() % t.size()] = junk[rng() % junk.size()];
    attempt(t);
  }
  CHECK(refused > 0);
  CHECK(loaded + refused == text.size() / 97 + 1 + 3000);
}
