// The trace's integer expressions: a recursive-descent parser that emits a
// postfix program, and a small stack evaluator (see expr.h for the grammar).
#include "models/common/expr.h"

#include <algorithm>

#include "models/common/errors.h"

namespace npusim {

namespace {

bool is_name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

class Parser {
 public:
  Parser(const std::string& text, const std::function<int(const std::string&)>& resolve,
         std::vector<Expr::Instr>& out)
      : text_(text), resolve_(resolve), out_(out) {}

  void parse() {
    if (text_.size() > kExprMaxLength)
      throw EvalError("bad expression '" + text_.substr(0, 40) + "...': longer than " +
                      std::to_string(kExprMaxLength) + " characters");
    expr();
    skip_ws();
    if (pos_ != text_.size()) expected("an operator or the end");
  }

 private:
  using Op = Expr::Op;

  [[noreturn]] void fail(const std::string& what, size_t at) const {
    throw EvalError("bad expression '" + text_ + "': " + what + " at character " +
                    std::to_string(at + 1));
  }
  [[noreturn]] void expected(const std::string& what) const { fail("expected " + what, pos_); }

  void skip_ws() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  char peek() {
    skip_ws();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  void expect(char c) {
    if (peek() != c) expected(std::string("'") + c + "'");
    ++pos_;
  }
  void emit(Op op, std::int64_t value = 0) { out_.push_back({op, value}); }

  void nest() {
    if (++depth_ > kExprMaxNesting) fail("expression nested too deeply", pos_);
  }

  void expr() {
    term();
    for (char c = peek(); c == '+' || c == '-'; c = peek()) {
      ++pos_;
      term();
      emit(c == '+' ? Op::Add : Op::Sub);
    }
  }

  void term() {
    unary();
    for (char c = peek(); c == '*' || c == '/' || c == '%'; c = peek()) {
      ++pos_;
      unary();
      emit(c == '*' ? Op::Mul : c == '/' ? Op::Div : Op::Mod);
    }
  }

  void unary() {
    if (peek() == '-') {
      ++pos_;
      nest();
      unary();
      --depth_;
      emit(Op::Neg);
      return;
    }
    atom();
  }

  void atom() {
    char c = peek();
    size_t start = pos_;
    if (is_digit(c)) {
      std::int64_t v = 0;
      for (; pos_ < text_.size() && is_digit(text_[pos_]); ++pos_) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, text_[pos_] - '0', &v))
          fail("number too large", start);
      }
      emit(Op::Const, v);
      return;
    }
    if (is_name_start(c)) {
      while (pos_ < text_.size() && is_name_char(text_[pos_])) ++pos_;
      std::string name = text_.substr(start, pos_ - start);
      if (name == "min" || name == "max") {
        nest();
        expect('(');
        expr();
        expect(',');
        expr();
        expect(')');
        --depth_;
        emit(name == "min" ? Op::Min : Op::Max);
        return;
      }
      int slot = resolve_(name);
      if (slot < 0) fail("unknown name '" + name + "'", start);
      emit(Op::Var, slot);
      return;
    }
    if (c == '(') {
      ++pos_;
      nest();
      expr();
      expect(')');
      --depth_;
      return;
    }
    expected("a number, a name, '(' , min( or max(");
  }

  const std::string& text_;
  const std::function<int(const std::string&)>& resolve_;
  std::vector<Expr::Instr>& out_;
  size_t pos_ = 0;
  int depth_ = 0;
};

// Evaluates `code` with `stack` of at least code.size() entries.
std::int64_t run(const std::vector<Expr::Instr>& code, const std::string& text, const ExprEnv* env,
                 std::int64_t* stack) {
  using Op = Expr::Op;
  auto overflow = [&]() -> EvalError { return EvalError("integer overflow in '" + text + "'"); };
  int sp = 0;
  for (const Expr::Instr& in : code) {
    switch (in.op) {
      case Op::Const:
        stack[sp++] = in.value;
        continue;
      case Op::Var: {
        std::int64_t v = 0;
        if (!env || !env->get(static_cast<int>(in.value), v))
          throw EvalError(env ? env->describe(static_cast<int>(in.value)) : "variable not available");
        stack[sp++] = v;
        continue;
      }
      case Op::Neg:
        if (stack[sp - 1] == std::numeric_limits<std::int64_t>::min()) throw overflow();
        stack[sp - 1] = -stack[sp - 1];
        continue;
      default:
        break;
    }
    std::int64_t b = stack[--sp];
    std::int64_t& a = stack[sp - 1];
    switch (in.op) {
      case Op::Add:
        if (__builtin_add_overflow(a, b, &a)) throw overflow();
        break;
      case Op::Sub:
        if (__builtin_sub_overflow(a, b, &a)) throw overflow();
        break;
      case Op::Mul:
        if (__builtin_mul_overflow(a, b, &a)) throw overflow();
        break;
      case Op::Div:
      case Op::Mod:
        if (b == 0)
          throw EvalError(std::string(in.op == Op::Div ? "division" : "remainder") + " by zero in '" +
                          text + "'");
        if (b == -1 && a == std::numeric_limits<std::int64_t>::min()) {
          if (in.op == Op::Div) throw overflow();
          a = 0;
        } else {
          a = in.op == Op::Div ? a / b : a % b;
        }
        break;
      case Op::Min:
        a = std::min(a, b);
        break;
      case Op::Max:
        a = std::max(a, b);
        break;
      default:
        break;
    }
  }
  return stack[0];
}

std::int64_t eval_code(const std::vector<Expr::Instr>& code, const std::string& text,
                       const ExprEnv* env) {
  if (code.empty()) return 0;
  constexpr size_t kSmall = 32;
  if (code.size() <= kSmall) {
    std::int64_t stack[kSmall];
    return run(code, text, env, stack);
  }
  std::vector<std::int64_t> stack(code.size());
  return run(code, text, env, stack.data());
}

}  // namespace

Expr Expr::constant(std::int64_t v) {
  Expr e;
  e.code_.push_back({Op::Const, v});
  return e;
}

Expr Expr::parse(const std::string& text, const std::function<int(const std::string&)>& resolve) {
  Expr e;
  e.text_ = text;
  Parser(text, resolve, e.code_).parse();
  bool has_var = std::any_of(e.code_.begin(), e.code_.end(),
                             [](const Instr& i) { return i.op == Op::Var; });
  if (!has_var && e.code_.size() > 1) {  // fold; "1/0" fails here, at load time
    std::int64_t v = eval_code(e.code_, e.text_, nullptr);
    e.code_.assign(1, {Op::Const, v});
  }
  return e;
}

std::int64_t Expr::eval(const ExprEnv& env) const {
  if (code_.size() == 1 && code_[0].op == Op::Const) return code_[0].value;
  return eval_code(code_, text_, &env);
}

std::vector<int> Expr::slots() const {
  std::vector<int> s;
  for (const Instr& i : code_)
    if (i.op == Op::Var && std::find(s.begin(), s.end(), static_cast<int>(i.value)) == s.end())
      s.push_back(static_cast<int>(i.value));
  return s;
}

}  // namespace npusim
