// The affine index helpers behind loop reordering.
#include <catch2/catch.hpp>

#include "core/fusion/affine_index.h"
#include "core/fusion/index_eval.h"

using namespace schedlab::fusion_detail;

TEST_CASE("affine index expressions parse and print as sympy does", "[fusion][affine]") {
  auto a = parse_affine_index("131072*d0 + d1 + 1024*d2", 3);
  REQUIRE(a);
  CHECK(a->strides == std::vector<std::int64_t>{131072, 1, 1024});
  CHECK(a->offset == 0);
  CHECK(format_affine_index(*a) == "131072*d0 + d1 + 1024*d2");
  auto b = parse_affine_index("d1 - 2*d0 + 5", 2);
  REQUIRE(b);
  CHECK(b->strides == std::vector<std::int64_t>{-2, 1});
  CHECK(format_affine_index(*b) == "-2*d0 + d1 + 5");
  CHECK(format_affine_index(*parse_affine_index("0", 1)) == "0");
  CHECK_FALSE(parse_affine_index("64*d0 + 8*Min(8, d2)", 3));
  CHECK_FALSE(parse_affine_index("tmp0 + d0", 1));
  CHECK_FALSE(parse_affine_index("d3", 2));  // only d0..d{n-1}
  CHECK_FALSE(parse_affine_index("d0 +", 1));
}

TEST_CASE("loop order: stride-order normal form and the matching permutation", "[fusion][affine]") {
  auto w = *parse_affine_index("131072*d0 + 1024*d1 + d2", 3);  // a pointwise write, loops [4, 128, 1024]
  auto r = *parse_affine_index("131072*d0 + d1 + 1024*d2", 3);  // a reduction's read, loops [4, 1024, 128]
  std::vector<std::int64_t> ws{4, 128, 1024}, rs{4, 1024, 128};
  // Both are the whole buffer, contiguous: one loop of 4*128*1024 after merging.
  CHECK(normalize_with_stride_order(w, ws) == normalize_with_stride_order(r, rs));
  CHECK(normalize_with_stride_order(w, ws).loops == std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 524288}});
  auto order = decide_loop_order_to_match(w, ws, r, rs);
  REQUIRE(order);
  CHECK(*order == std::vector<int>{0, 2, 1});
  // Broadcasts (a loop the index does not use) and size-1 loops are not reordered.
  CHECK_FALSE(decide_loop_order_to_match(*parse_affine_index("d1", 2), {16, 64}, *parse_affine_index("d0", 2), {64, 16}));
  CHECK_FALSE(decide_loop_order_to_match(*parse_affine_index("d0 + d1", 2), {1, 64}, *parse_affine_index("d0 + d1", 2), {1, 64}));
  // Merging contiguous loops without reordering.
  NormalForm n = normalize_loops(*parse_affine_index("1024*d0 + d1", 2), {1024, 1024});
  CHECK(n.index == "d0");
  CHECK(n.sizes == std::vector<std::int64_t>{1048576});
}

TEST_CASE("coefficients and sizes near 2^63 neither wrap nor merge inexactly", "[fusion][affine][errors]") {
  const std::string big = "9223372036854775807";  // INT64_MAX: 19 digits, past what a coefficient may have
  CHECK_FALSE(parse_affine_index(big + "*d0", 1));
  // 18-digit coefficients summing past 2^63 on one variable: not affine here.
  CHECK_FALSE(parse_affine_index("999999999999999999*d0 + 999999999999999999*d0 + 999999999999999999*d0 + "
                                 "999999999999999999*d0 + 999999999999999999*d0 + 999999999999999999*d0 + "
                                 "999999999999999999*d0 + 999999999999999999*d0 + 999999999999999999*d0 + "
                                 "999999999999999999*d0",
                                 1));
  auto a = parse_affine_index("999999999999999999*d0 + 9*d1", 2);
  REQUIRE(a);
  // 9 * huge overflows: the loops are not contiguous, nothing merges.
  auto form = normalize_with_stride_order(*a, {3, 999999999999999999});
  CHECK(form.loops.size() == 2);
  // Contiguous, but the merged size would not fit in 63 bits: left unmerged.
  auto c = parse_affine_index("4294967296*d0 + d1", 2);
  REQUIRE(c);
  CHECK(normalize_loops(*c, {4294967296, 4294967296}).sizes == std::vector<std::int64_t>{4294967296, 4294967296});
  CHECK(normalize_loops(*c, {4, 4294967296}).sizes == std::vector<std::int64_t>{17179869184});
}

TEST_CASE("index expressions evaluate to Inductor's stride hints, affine or not", "[fusion][affine]") {
  auto strides = [](const std::string& text, std::size_t n, const SymbolHints& hints = {}) {
    auto e = IndexExpr::parse(text);
    REQUIRE(e);
    return e->strides(n, hints);
  };
  CHECK(*strides("75264*d0 + d1 + 5376*d2 + 14*d3", 4) == std::vector<std::int64_t>{75264, 1, 5376, 14});
  // A loop the index does not use has stride 0; offsets drop out.
  CHECK(*strides("196*d0 + d1 + 14*d2 + 7", 4) == std::vector<std::int64_t>{196, 1, 14, 0});
  // index(v = 1) - index(0), as sympy substitutes: floor divisions and
  // modular indexing at 1, Min of an offset form.
  CHECK(*strides("d1 + 384*(ModularIndexing(d2, 1, 14)) + 5376*(ModularIndexing(126*d1 + d2, 14, 224))", 3) ==
        std::vector<std::int64_t>{0, 1 + 5376 * 9, 384});
  CHECK(*strides("196*d1 + 75264*((d0//196)) + (ModularIndexing(d0, 1, 196))", 2) == std::vector<std::int64_t>{1, 196});
  CHECK(*strides("64*d0 + 8*Min(Min(8, ((d1//2)) + 1) - 1, (d1//2))", 2) == std::vector<std::int64_t>{64, 0});
  CHECK(*strides("131072*d0 + 512*d1 + ((d2 - 512))", 3) == std::vector<std::int64_t>{131072, 512, 1});
  // Indirect loads count 0; size symbols take their hints; a stride that
  // moves with an unbacked symbol is 0; an unknown symbol is not evaluated.
  CHECK(*strides("d1 + 256*tmp0", 2) == std::vector<std::int64_t>{0, 1});
  CHECK(*strides("256*d0*s50 + 256*d1 + d2", 3, {{"s50", 128}}) == std::vector<std::int64_t>{32768, 256, 1});
  CHECK(*strides("d0 + u0", 1) == std::vector<std::int64_t>{1});
  CHECK(*strides("u0*d0 + d1", 2) == std::vector<std::int64_t>{0, 1});
  CHECK_FALSE(IndexExpr::parse("d0 + s7")->strides(1, {}));
  CHECK_FALSE(IndexExpr::parse("d3")->strides(2, {}));  // a variable past the loops
  CHECK_FALSE(IndexExpr::parse("d0 +"));
  CHECK_FALSE(IndexExpr::parse("Foo(d0)"));
  CHECK_FALSE(IndexExpr::parse("d0 / 2"));
  CHECK_FALSE(IndexExpr::parse("9223372036854775807*d0"));  // 19 digits
  CHECK_FALSE(IndexExpr::parse("999999999999999999*999999999999999999*d0")->strides(1, {}));  // overflow
}
