// The trace's integer expression language (trace-format.md, "Expressions").
//
// Grammar (whitespace ignored):
//   expr   := term   (('+' | '-') term)*
//   term   := unary  (('*' | '/' | '%') unary)*
//   unary  := '-' unary | atom
//   atom   := INT | NAME | '(' expr ')' | ('min' | 'max') '(' expr ',' expr ')'
//   INT    := [0-9]+            NAME := [A-Za-z_][A-Za-z0-9_]*  (not min/max)
// '/' and '%' are C++ integer division and remainder (truncation toward zero);
// division or remainder by zero and signed overflow are evaluation errors.
//
// An expression is compiled once (names resolved to variable slots by the
// caller's resolver) into a small postfix program and evaluated many times.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace npusim {

// Limits, checked by Expr::parse (a "bad expression" EvalError beyond them):
// the length of the text, and the nesting of parentheses, min/max and unary
// minus together.
constexpr std::size_t kExprMaxLength = 4096;  // characters
constexpr int kExprMaxNesting = 200;

// Read access to integer variables by slot during evaluation. `get` returns
// false when the slot holds no integer; `describe` explains why, for messages
// (e.g. "variable 'x' is not bound" or "variable 'q' is a tensor, not an integer").
class ExprEnv {
 public:
  virtual ~ExprEnv() = default;
  virtual bool get(int slot, std::int64_t& value) const = 0;
  virtual std::string describe(int slot) const = 0;
};

class Expr {
 public:
  enum class Op : std::uint8_t { Const, Var, Add, Sub, Mul, Div, Mod, Neg, Min, Max };
  struct Instr {
    Op op;
    std::int64_t value;  // Const: the literal; Var: the slot
  };

  Expr() = default;
  static Expr constant(std::int64_t v);

  // Parses `text`. `resolve(name)` returns the slot for a variable name, or -1
  // if the name is not allowed here (then parsing fails with "unknown name").
  // Throws EvalError with a message that quotes the text and says what was
  // expected at which character.
  static Expr parse(const std::string& text, const std::function<int(const std::string&)>& resolve);

  bool is_const() const { return code_.size() == 1 && code_[0].op == Op::Const; }
  std::int64_t const_value() const { return code_.empty() ? 0 : code_[0].value; }
  bool empty() const { return code_.empty(); }

  // Throws EvalError ("division by zero in 'i/n'", "variable 'x' is not bound", ...).
  std::int64_t eval(const ExprEnv& env) const;
  // `dflt` for an absent (empty) expression, else eval(env).
  std::int64_t eval_or(const ExprEnv& env, std::int64_t dflt) const { return empty() ? dflt : eval(env); }

  // Slots this expression reads (for static binding checks).
  std::vector<int> slots() const;

  // The source text ("" for a constant given as a JSON integer).
  const std::string& text() const { return text_; }

 private:
  std::vector<Instr> code_;
  std::string text_;
};

}  // namespace npusim
