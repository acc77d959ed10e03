#include "core/fusion/index_eval.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace schedlab::fusion_detail {

struct IndexExpr::Node {
  enum class Op : std::uint8_t { Const, Var, Indirect, Symbol, Unbacked, Add, Sub, Mul, FloorDiv, Pow, Neg, Mod, Min, Max };
  Op op = Op::Const;
  std::int64_t value = 0;  // Const: the number; Var: the variable's number
  std::string name;        // Symbol, Unbacked
  std::vector<std::shared_ptr<const Node>> args;
};

namespace {

using Node = IndexExpr::Node;
using NodePtr = std::shared_ptr<const Node>;

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  NodePtr parse() {
    NodePtr e = expr();
    skip();
    return e && pos_ == s_.size() ? e : nullptr;
  }

 private:
  const std::string& s_;
  std::size_t pos_ = 0;

  void skip() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  bool eat(const char* tok) {
    skip();
    std::size_t n = std::char_traits<char>::length(tok);
    if (s_.compare(pos_, n, tok) != 0) return false;
    // "*" must not eat the first half of "**", nor "/" of "//".
    if ((n == 1 && (tok[0] == '*' || tok[0] == '/')) && pos_ + 1 < s_.size() && s_[pos_ + 1] == tok[0]) return false;
    pos_ += n;
    return true;
  }
  static NodePtr make(Node::Op op, std::vector<NodePtr> args) {
    auto n = std::make_shared<Node>();
    n->op = op;
    n->args = std::move(args);
    return n;
  }

  NodePtr expr() {
    NodePtr left = term();
    while (left) {
      if (eat("+")) left = make(Node::Op::Add, {left, term()});
      else if (eat("-")) left = make(Node::Op::Sub, {left, term()});
      else break;
      if (!left->args[1]) return nullptr;
    }
    return left;
  }
  NodePtr term() {
    NodePtr left = unary();
    while (left) {
      if (eat("//")) left = make(Node::Op::FloorDiv, {left, unary()});
      else if (eat("*")) left = make(Node::Op::Mul, {left, unary()});
      else break;
      if (!left->args[1]) return nullptr;
    }
    return left;
  }
  NodePtr unary() {
    if (eat("-")) {
      NodePtr inner = unary();
      return inner ? make(Node::Op::Neg, {inner}) : nullptr;
    }
    NodePtr base = atom();
    if (base && eat("**")) {
      NodePtr exponent = unary();
      return exponent ? make(Node::Op::Pow, {base, exponent}) : nullptr;
    }
    return base;
  }
  NodePtr atom() {
    skip();
    if (pos_ >= s_.size()) return nullptr;
    if (s_[pos_] == '(') {
      ++pos_;
      NodePtr inner = expr();
      return inner && eat(")") ? inner : nullptr;
    }
    if (std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      std::size_t end = pos_;
      while (end < s_.size() && std::isdigit(static_cast<unsigned char>(s_[end]))) ++end;
      if (end - pos_ > 18) return nullptr;
      auto n = std::make_shared<Node>();
      n->value = std::stoll(s_.substr(pos_, end - pos_));
      pos_ = end;
      return n;
    }
    if (!std::isalpha(static_cast<unsigned char>(s_[pos_])) && s_[pos_] != '_') return nullptr;
    std::size_t end = pos_;
    while (end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_')) ++end;
    std::string name = s_.substr(pos_, end - pos_);
    pos_ = end;
    skip();
    if (pos_ < s_.size() && s_[pos_] == '(') return call(name);
    return symbol(name);
  }
  NodePtr call(const std::string& name) {
    ++pos_;  // '('
    std::vector<NodePtr> args;
    do {
      NodePtr a = expr();
      if (!a) return nullptr;
      args.push_back(a);
    } while (eat(","));
    if (!eat(")")) return nullptr;
    if (name == "ModularIndexing" && args.size() == 3)
      return make(Node::Op::Mod, {make(Node::Op::FloorDiv, {args[0], args[1]}), args[2]});
    if (name == "FloorDiv" && args.size() == 2) return make(Node::Op::FloorDiv, args);
    if (name == "Min" && !args.empty()) return make(Node::Op::Min, args);
    if (name == "Max" && !args.empty()) return make(Node::Op::Max, args);
    return nullptr;
  }
  static NodePtr symbol(const std::string& name) {
    auto numbered = [&](std::size_t prefix) {
      return name.size() > prefix && name.size() - prefix <= 9 &&
             std::all_of(name.begin() + static_cast<std::ptrdiff_t>(prefix), name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    };
    auto n = std::make_shared<Node>();
    n->name = name;
    if (name[0] == 'd' && numbered(1)) {
      n->op = Node::Op::Var;
      n->value = std::stoll(name.substr(1));
    } else if (name.rfind("tmp", 0) == 0 && numbered(3)) {
      n->op = Node::Op::Indirect;
    } else if (name[0] == 'u' && numbered(1)) {
      n->op = Node::Op::Unbacked;
    } else if ((name[0] == 's' && numbered(1)) || (name.rfind("ps", 0) == 0 && numbered(2))) {
      n->op = Node::Op::Symbol;
    } else {
      return nullptr;
    }
    return n;
  }
};

// Python's floor division and modulo (sympy's FloorDiv and Mod on integers).
std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
std::int64_t floor_mod(std::int64_t a, std::int64_t b) { return a - floor_div(a, b) * b; }

struct Point {
  const std::vector<std::int64_t>& vars;
  const SymbolHints& hints;
  std::int64_t unbacked;  // the value every unbacked symbol takes
};

// false: not evaluable (unknown symbol, out-of-range variable, overflow, x // 0).
bool eval(const Node& n, const Point& at, std::int64_t& out) {
  using Op = Node::Op;
  switch (n.op) {
    case Op::Const: out = n.value; return true;
    case Op::Var:
      if (n.value < 0 || static_cast<std::size_t>(n.value) >= at.vars.size()) return false;
      out = at.vars[static_cast<std::size_t>(n.value)];
      return true;
    case Op::Indirect: out = 0; return true;
    case Op::Unbacked: out = at.unbacked; return true;
    case Op::Symbol: {
      auto it = at.hints.find(n.name);
      if (it == at.hints.end()) return false;
      out = it->second;
      return true;
    }
    case Op::Neg: {
      std::int64_t v = 0;
      if (!eval(*n.args[0], at, v) || v == std::numeric_limits<std::int64_t>::min()) return false;
      out = -v;
      return true;
    }
    case Op::Min:
    case Op::Max: {
      for (std::size_t i = 0; i < n.args.size(); ++i) {
        std::int64_t v = 0;
        if (!eval(*n.args[i], at, v)) return false;
        if (i == 0 || (n.op == Op::Min ? v < out : v > out)) out = v;
      }
      return true;
    }
    default: break;
  }
  std::int64_t a = 0, b = 0;
  if (!eval(*n.args[0], at, a) || !eval(*n.args[1], at, b)) return false;
  switch (n.op) {
    case Op::Add: return !__builtin_add_overflow(a, b, &out);
    case Op::Sub: return !__builtin_sub_overflow(a, b, &out);
    case Op::Mul: return !__builtin_mul_overflow(a, b, &out);
    case Op::FloorDiv:
      if (b == 0 || (a == std::numeric_limits<std::int64_t>::min() && b == -1)) return false;
      out = floor_div(a, b);
      return true;
    case Op::Mod:
      if (b == 0 || (a == std::numeric_limits<std::int64_t>::min() && b == -1)) return false;
      out = floor_mod(a, b);
      return true;
    case Op::Pow: {
      if (b < 0) return false;
      std::int64_t r = 1;
      for (std::int64_t i = 0; i < b; ++i)
        if (__builtin_mul_overflow(r, a, &r)) return false;
      out = r;
      return true;
    }
    default: return false;
  }
}

bool has_unbacked(const Node& n) {
  if (n.op == Node::Op::Unbacked) return true;
  for (const auto& a : n.args)
    if (has_unbacked(*a)) return true;
  return false;
}

}  // namespace

std::optional<IndexExpr> IndexExpr::parse(const std::string& text) {
  Parser p(text);
  NodePtr root = p.parse();
  if (!root) return std::nullopt;
  IndexExpr e;
  e.root_ = std::move(root);
  return e;
}

std::optional<std::vector<std::int64_t>> IndexExpr::strides(std::size_t num_vars, const SymbolHints& hints) const {
  // An unbacked symbol has no hint: the stride is taken at two values of it,
  // and one that moves with it is not known (stride_hints gives 0).
  const bool unbacked = has_unbacked(*root_);
  std::vector<std::int64_t> point(num_vars, 0);
  std::vector<std::int64_t> out(num_vars, 0);
  for (std::int64_t u : {std::int64_t{0}, std::int64_t{1000003}}) {
    const Point at{point, hints, u};
    std::int64_t origin = 0;
    if (!eval(*root_, at, origin)) return std::nullopt;
    for (std::size_t i = 0; i < num_vars; ++i) {
      point[i] = 1;
      std::int64_t v = 0;
      const bool ok = eval(*root_, at, v);
      point[i] = 0;
      std::int64_t stride = 0;
      if (!ok || __builtin_sub_overflow(v, origin, &stride)) return std::nullopt;
      if (u == 0) out[i] = stride;
      else if (out[i] != stride) out[i] = 0;
    }
    if (!unbacked) break;
  }
  return out;
}

}  // namespace schedlab::fusion_detail
