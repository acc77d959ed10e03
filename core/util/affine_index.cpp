// Affine index expressions (core/util/affine_index.h).
#include "core/util/affine_index.h"

#include <cctype>
#include <limits>

#include "core/util/saturating.h"

namespace schedlab {
namespace {

bool parse_int(std::string_view s, std::int64_t& out) {
  if (s.empty() || s.size() > 18) return false;
  out = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

// A loop variable, "dK" -> K.
bool parse_var(std::string_view s, std::size_t num_vars, std::string_view letters, std::size_t& var) {
  if (s.size() < 2 || letters.find(s[0]) == std::string_view::npos) return false;
  std::int64_t k = 0;
  if (!parse_int(s.substr(1), k) || static_cast<std::size_t>(k) >= num_vars) return false;
  var = static_cast<std::size_t>(k);
  return true;
}

}  // namespace

// Coefficients and their sums must stay exact and above INT64_MIN (whose
// negation does not exist); a form that leaves that range is not affine here.
std::optional<AffineIndex> parse_affine_index(std::string_view text, std::size_t num_vars, std::string_view loop_letters) {
  AffineIndex out;
  out.strides.assign(num_vars, 0);
  std::size_t pos = 0;
  int sign = 1;
  bool expect_term = true;
  while (pos < text.size()) {
    if (text[pos] == ' ') {
      ++pos;
      continue;
    }
    if (!expect_term) {
      if (text[pos] != '+' && text[pos] != '-') return std::nullopt;
      sign = text[pos] == '-' ? -1 : 1;
      ++pos;
      expect_term = true;
      continue;
    }
    if (text[pos] == '-') {  // leading minus
      sign = -sign;
      ++pos;
      continue;
    }
    std::size_t end = text.find(' ', pos);
    std::string_view term = text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    pos = end == std::string_view::npos ? text.size() : end;
    std::int64_t coef = 1;
    std::size_t var = 0;
    std::int64_t* target = nullptr;
    auto star = term.find('*');
    if (star != std::string_view::npos) {
      if (!parse_int(term.substr(0, star), coef) || !parse_var(term.substr(star + 1), num_vars, loop_letters, var)) return std::nullopt;
      target = &out.strides[var];
    } else if (parse_var(term, num_vars, loop_letters, var)) {
      target = &out.strides[var];
    } else if (parse_int(term, coef)) {
      target = &out.offset;
    } else {
      return std::nullopt;
    }
    if (!exact_add(*target, sign * coef, *target) || *target == std::numeric_limits<std::int64_t>::min()) return std::nullopt;
    sign = 1;
    expect_term = false;
  }
  if (expect_term) return std::nullopt;
  return out;
}

}  // namespace schedlab
