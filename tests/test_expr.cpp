// Expressions (models/common/expr.h): parsing, evaluation, errors.
#include "tests/catch.h"

#include <map>

#include "models/common/errors.h"
#include "models/common/expr.h"

using npusim::EvalError;
using npusim::Expr;

namespace {

// Variables by name; slots are assigned in order of first use.
struct Vars : npusim::ExprEnv {
  std::vector<std::string> names;
  std::map<std::string, std::int64_t> values;

  int slot(const std::string& name) {
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return static_cast<int>(i);
    names.push_back(name);
    return static_cast<int>(names.size() - 1);
  }
  bool get(int s, std::int64_t& v) const override {
    auto it = values.find(names[s]);
    if (it == values.end()) return false;
    v = it->second;
    return true;
  }
  std::string describe(int s) const override { return "variable '" + names[s] + "' is not bound"; }

  Expr parse(const std::string& text) {
    return Expr::parse(text, [this](const std::string& n) { return n == "bad" ? -1 : slot(n); });
  }
  std::int64_t eval(const std::string& text) { return parse(text).eval(*this); }
};

std::string parse_error(const std::string& text) {
  Vars v;
  try {
    v.parse(text);
  } catch (const EvalError& e) {
    return e.what();
  }
  return "no error";
}

std::string eval_error(const std::string& text, std::map<std::string, std::int64_t> values) {
  Vars v;
  v.values = std::move(values);
  try {
    v.eval(text);
  } catch (const EvalError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("expr: precedence, associativity and integer division") {
  Vars v;
  CHECK(v.eval("1+2*3") == 7);
  CHECK(v.eval("(1+2)*3") == 9);
  CHECK(v.eval("10-4-3") == 3);
  CHECK(v.eval("100/10/5") == 2);
  CHECK(v.eval("7/2") == 3);
  CHECK(v.eval("-7/2") == -3);
  CHECK(v.eval("-7%3") == -1);
  CHECK(v.eval("7%-3") == 1);
  CHECK(v.eval("--5") == 5);
  CHECK(v.eval("2*-3") == -6);
  CHECK(v.eval("  1 +\t2 ") == 3);
  CHECK(v.eval("min(3, 2*4)") == 3);
  CHECK(v.eval("max(min(1,2), -(4))") == 1);
}

TEST_CASE("expr: variables are read through the environment") {
  Vars v;
  v.values = {{"i", 3}, {"block_idx", 5}, {"n_2", 10}};
  Expr e = v.parse("i*64 + block_idx - n_2 % 4");
  CHECK(e.eval(v) == 3 * 64 + 5 - 2);
  CHECK_FALSE(e.is_const());
  CHECK(e.text() == "i*64 + block_idx - n_2 % 4");
  CHECK(e.slots() == std::vector<int>{0, 1, 2});
  CHECK(v.parse("i+i*i").slots() == std::vector<int>{0});
  v.values["i"] = 4;
  CHECK(e.eval(v) == 4 * 64 + 5 - 2);
}

TEST_CASE("expr: a name is a letter or '_' then letters, digits and '_', each range to its last character") {
  Vars v;
  v.values = {{"A", 1}, {"Z", 2}, {"a", 3}, {"z", 4}, {"_", 5}, {"aZ_09", 6}, {"zA9", 7}};
  CHECK(v.eval("A + Z + a + z + _") == 15);
  CHECK(v.eval("aZ_09 * 10 + zA9") == 67);
  // The characters just outside each range are no name.
  for (const char* text : {"@", "[", "`", "{"})
    CHECK(parse_error(text) ==
          std::string("bad expression '") + text + "': expected a number, a name, '(' , min( or max( at character 1");
  CHECK(parse_error("a:") == "bad expression 'a:': expected an operator or the end at character 2");
}

TEST_CASE("expr: constants fold and JSON integers are constants") {
  Vars v;
  Expr e = v.parse("64*2 - 1");
  CHECK(e.is_const());
  CHECK(e.const_value() == 127);
  CHECK(e.text() == "64*2 - 1");
  Expr c = Expr::constant(-9);
  CHECK(c.is_const());
  CHECK(c.const_value() == -9);
  CHECK(c.text().empty());
  CHECK(c.slots().empty());
  CHECK(Expr().empty());
}

TEST_CASE("expr: syntax errors quote the text and say what was expected where") {
  CHECK(parse_error("i*") ==
        "bad expression 'i*': expected a number, a name, '(' , min( or max( at character 3");
  CHECK(parse_error("") == "bad expression '': expected a number, a name, '(' , min( or max( at character 1");
  CHECK(parse_error("i j") == "bad expression 'i j': expected an operator or the end at character 3");
  CHECK(parse_error("(1+2") == "bad expression '(1+2': expected ')' at character 5");
  CHECK(parse_error("min(1 2)") == "bad expression 'min(1 2)': expected ',' at character 7");
  CHECK(parse_error("max+1") == "bad expression 'max+1': expected '(' at character 4");
  CHECK(parse_error("i & 1") == "bad expression 'i & 1': expected an operator or the end at character 3");
  CHECK(parse_error("2*bad") == "bad expression '2*bad': unknown name 'bad' at character 3");
  CHECK(parse_error("99999999999999999999") ==
        "bad expression '99999999999999999999': number too large at character 1");
  CHECK(parse_error(std::string(300, '(') + "1" + std::string(300, ')')).find("nested too deeply") !=
        std::string::npos);
}

TEST_CASE("expr: limits on length and nesting") {
  // kExprMaxLength characters are accepted, one more is not (the message quotes only the start).
  std::string longest = "1";
  while (longest.size() + 2 <= npusim::kExprMaxLength) longest += "+1";
  if (longest.size() < npusim::kExprMaxLength) longest += " ";
  REQUIRE(longest.size() == npusim::kExprMaxLength);
  CHECK(parse_error(longest) == "no error");
  CHECK(parse_error(longest + "+") ==
        "bad expression '" + longest.substr(0, 40) + "...': longer than 4096 characters");
  // Parentheses, min/max and unary minus together nest at most kExprMaxNesting deep.
  const int n = npusim::kExprMaxNesting;
  CHECK(parse_error(std::string(n, '(') + "1" + std::string(n, ')')) == "no error");
  CHECK(parse_error(std::string(n + 1, '(') + "1" + std::string(n + 1, ')')) ==
        "bad expression '" + std::string(n + 1, '(') + "1" + std::string(n + 1, ')') +
            "': expression nested too deeply at character 202");
  CHECK(parse_error(std::string(n, '-') + "1") == "no error");
  CHECK(parse_error(std::string(n / 2, '-') + std::string(n / 2, '(') + "min(1,2" + std::string(n / 2, ')') + ")")
            .find("nested too deeply at character") != std::string::npos);
}

TEST_CASE("expr: division by zero and overflow name the expression") {
  CHECK(eval_error("i/n", {{"i", 1}, {"n", 0}}) == "division by zero in 'i/n'");
  CHECK(eval_error("i%n", {{"i", 1}, {"n", 0}}) == "remainder by zero in 'i%n'");
  CHECK(eval_error("a*a", {{"a", 1LL << 32}}) == "integer overflow in 'a*a'");
  CHECK(eval_error("a+1", {{"a", INT64_MAX}}) == "integer overflow in 'a+1'");
  CHECK(eval_error("0-a-2", {{"a", INT64_MAX}}) == "integer overflow in '0-a-2'");
  CHECK(eval_error("-a", {{"a", INT64_MIN}}) == "integer overflow in '-a'");
  CHECK(eval_error("a/b", {{"a", INT64_MIN}, {"b", -1}}) == "integer overflow in 'a/b'");
  CHECK(eval_error("a%b", {{"a", INT64_MIN}, {"b", -1}}) == "no error");
  Vars m;  // and its value is 0 (the C++ expression would overflow)
  m.values = {{"a", INT64_MIN}, {"b", -1}};
  CHECK(m.eval("a%b") == 0);
  CHECK(eval_error("x+1", {}) == "variable 'x' is not bound");
  // a constant error is found when the text is parsed
  CHECK(parse_error("1/0") == "division by zero in '1/0'");
}
