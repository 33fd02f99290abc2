#include "sim/json/stream.h"

#include <cstdint>
#include <unordered_set>

#include <nlohmann/json.hpp>

namespace npusim::json_input {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::size_t skip_space(std::string_view t, std::size_t i) {
  while (i < t.size() && is_space(t[i])) ++i;
  return i;
}

// `i` at a string's opening quote: the offset after its closing quote.
std::size_t skip_string(std::string_view t, std::size_t i) {
  for (++i; i < t.size(); ++i) {
    if (t[i] == '\\') ++i;
    else if (t[i] == '"') return i + 1;
  }
  return t.size();
}

// `i` at a value: the offset after it.
std::size_t skip_value(std::string_view t, std::size_t i) {
  int depth = 0;
  while (i < t.size()) {
    const char c = t[i];
    if (c == '"') {
      i = skip_string(t, i);
      if (depth == 0) return i;
      continue;
    }
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (depth == 0) return i;  // a scalar's end at its container's close
      if (--depth == 0) return i + 1;
    } else if (depth == 0 && (c == ',' || is_space(c))) {
      return i;
    }
    ++i;
  }
  return i;
}

// The decoded text of the JSON string starting at `i` (at its quote); the
// text was accepted by a parser, so the token is a valid string.
std::string decode_key(std::string_view t, std::size_t i) {
  return nlohmann::json::parse(t.substr(i, skip_string(t, i) - i)).get<std::string>();
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// quick_accept's container: an object's keys as written (quick_accept
// refuses an escape in a key, so equal text is an equal key).
struct ScanFrame {
  bool object = false;
  bool list = false;  // the root's member list_key
  std::string_view key;                          // objects: the current key
  std::vector<std::string_view> keys;            // while there are few
  std::unordered_set<std::string_view> many;     // beyond kFewKeys: all of them
};
constexpr std::size_t kFewKeys = 16;

// Adds `k` to the object `f`; false when `f` has it already.
bool add_key(ScanFrame& f, std::string_view k) {
  f.key = k;
  if (f.many.empty()) {
    for (std::string_view s : f.keys)
      if (s == k) return false;
    f.keys.push_back(k);
    if (f.keys.size() > kFewKeys) f.many.insert(f.keys.begin(), f.keys.end());
    return true;
  }
  return f.many.insert(k).second;
}

// `i` at a string's opening quote: moves `i` after its closing quote; false
// on what quick_accept leaves to JsonDom (see stream.h) or an error.
bool scan_string(std::string_view t, std::size_t& i, bool key) {
  const std::size_t n = t.size();
  for (++i; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(t[i]);
    if (c == '"') {
      ++i;
      return true;
    }
    if (c == '\\') {
      if (key || ++i >= n) return false;
      const char e = t[i];
      if (e != '"' && e != '\\' && e != '/' && e != 'b' && e != 'f' && e != 'n' && e != 'r' && e != 't') return false;
    } else if (c < 0x20 || c >= 0x80) {
      return false;
    }
  }
  return false;
}

// `i` at a number's first character: moves `i` after it; false on a number
// that is not JSON's grammar, or has an exponent or more than 300 digits
// before its point (either might be beyond a double's range: JsonDom says).
bool scan_number(std::string_view t, std::size_t& i) {
  const std::size_t n = t.size();
  if (t[i] == '-') ++i;
  const std::size_t digits = i;
  if (i < n && t[i] == '0') {
    ++i;
  } else if (i < n && is_digit(t[i])) {
    while (i < n && is_digit(t[i])) ++i;
  } else {
    return false;
  }
  if (i - digits > 300) return false;
  if (i < n && t[i] == '.') {
    if (++i >= n || !is_digit(t[i])) return false;
    while (i < n && is_digit(t[i])) ++i;
  }
  return i >= n || (t[i] != 'e' && t[i] != 'E');
}

// quick_parse: a value of accepted text into `out`. A container's members
// are gathered on a stack shared by all levels (a member is pushed once its
// value is built, so a nested container's members come and go above it),
// then moved into a container of their exact number: one allocation per
// object or list, where appending would grow it 1, 2, 4 (and copy the keys,
// which an ordered_json's members hold const).
class QuickBuilder {
 public:
  using J = nlohmann::ordered_json;
  using Member = std::pair<std::string, J>;
  QuickBuilder(std::string_view t, std::vector<Member>& members, std::vector<J>& elements)
      : t_(t), members_(members), elements_(elements) {}

  bool document(J& out) {
    i_ = skip_space(t_, 0);
    if (!value(out)) return false;
    return skip_space(t_, i_) == t_.size();
  }

 private:
  // Empties a value being built on the way out (json_read.h dismantle: J's
  // destructor allocates); a no-op on a value moved into a stack.
  struct Dismantle {
    J& j;
    ~Dismantle() { dismantle(j); }
  };
  char at(std::size_t i) const { return i < t_.size() ? t_[i] : '\0'; }

  // The text of the string at i_ (its quote), i_ after it; false on an escape.
  bool string(std::string_view& s) {
    const std::size_t start = i_ + 1;
    for (std::size_t i = start; i < t_.size(); ++i) {
      if (t_[i] == '"') {
        s = t_.substr(start, i - start);
        i_ = i + 1;
        return true;
      }
      if (t_[i] == '\\') return false;
    }
    return false;
  }

  bool value(J& out) {
    const char c = at(i_);
    switch (c) {
      case '{': return object(out);
      case '[': return list(out);
      case '"': {
        std::string_view s;
        if (!string(s)) return false;
        out = J(std::string(s));
        return true;
      }
      case 't': return literal("true", J(true), out);
      case 'f': return literal("false", J(false), out);
      case 'n': return literal("null", J(nullptr), out);
      default: return integer(out);
    }
  }

  bool object(J& out) {
    const std::size_t first = members_.size();
    i_ = skip_space(t_, i_ + 1);
    if (at(i_) != '}') {
      for (;;) {
        std::string_view k;
        if (at(i_) != '"' || !string(k)) return false;
        i_ = skip_space(t_, i_);
        if (at(i_) != ':') return false;
        i_ = skip_space(t_, i_ + 1);
        J v;
        const Dismantle guard{v};  // a bad_alloc below: v emptied without allocating
        if (!value(v)) return false;
        members_.emplace_back(std::string(k), std::move(v));
        i_ = skip_space(t_, i_);
        if (at(i_) == '}') break;
        if (at(i_) != ',') return false;
        i_ = skip_space(t_, i_ + 1);
      }
    }
    ++i_;
    out = J::object();
    // ordered_json: append (the text has no duplicate key), as JsonDom does.
    auto& obj = static_cast<std::vector<std::pair<const std::string, J>>&>(out.get_ref<J::object_t&>());
    obj.reserve(members_.size() - first);
    for (std::size_t m = first; m < members_.size(); ++m)
      obj.emplace_back(std::move(members_[m].first), std::move(members_[m].second));
    members_.resize(first);
    return true;
  }

  bool list(J& out) {
    const std::size_t first = elements_.size();
    i_ = skip_space(t_, i_ + 1);
    if (at(i_) != ']') {
      for (;;) {
        J v;
        const Dismantle guard{v};
        if (!value(v)) return false;
        elements_.push_back(std::move(v));
        i_ = skip_space(t_, i_);
        if (at(i_) == ']') break;
        if (at(i_) != ',') return false;
        i_ = skip_space(t_, i_ + 1);
      }
    }
    ++i_;
    out = J::array();
    auto& a = out.get_ref<J::array_t&>();
    a.reserve(elements_.size() - first);
    for (std::size_t e = first; e < elements_.size(); ++e) a.push_back(std::move(elements_[e]));
    elements_.resize(first);
    return true;
  }

  bool literal(std::string_view word, J&& v, J& out) {
    if (t_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    out = std::move(v);
    return true;
  }

  // nlohmann's types: a non-negative integer unsigned, a negative one
  // signed; up to 18 digits, which neither type overflows.
  bool integer(J& out) {
    const bool negative = at(i_) == '-';
    std::size_t i = i_ + (negative ? 1 : 0);
    const std::size_t first = i;
    std::uint64_t v = 0;
    while (is_digit(at(i))) v = v * 10 + static_cast<std::uint64_t>(at(i++) - '0');
    const char next = at(i);
    if (i == first || i - first > 18 || next == '.' || next == 'e' || next == 'E') return false;
    if (negative)
      out = J(static_cast<J::number_integer_t>(-static_cast<std::int64_t>(v)));
    else
      out = J(static_cast<J::number_unsigned_t>(v));
    i_ = i;
    return true;
  }

  std::string_view t_;
  std::size_t i_ = 0;
  std::vector<Member>& members_;  // the open objects' members so far
  std::vector<J>& elements_;      // the open lists' elements so far
};

}  // namespace

bool quick_accept(std::string_view t, std::string_view list_key, std::size_t* list_at, std::size_t* list_end) {
  *list_at = *list_end = std::string_view::npos;
  std::size_t found_at = std::string_view::npos, found_end = std::string_view::npos;
  std::vector<ScanFrame> frames;  // frames[0, depth): the open containers (kept for their key vectors)
  std::size_t depth = 0;
  const std::size_t n = t.size();
  std::size_t i = skip_space(t, 0);
  enum class Expect { Value, Key, Next } expect = Expect::Value;
  for (;;) {
    switch (expect) {
      case Expect::Value: {
        if (i >= n) return false;
        const char c = t[i];
        if (c == '{' || c == '[') {
          // JsonDom: more than kMaxJsonNesting open containers is an error.
          if (depth == static_cast<std::size_t>(kMaxJsonNesting)) return false;
          if (frames.size() == depth) frames.emplace_back();
          ScanFrame& f = frames[depth];
          f.object = c == '{';
          f.list = !f.object && depth == 1 && frames[0].object && frames[0].key == list_key;
          if (f.list) found_at = i;
          f.keys.clear();
          // A fresh set, not clear(): clear() zeroes every bucket, and a set that once
          // held a large object's keys would cost that much at each object opened here.
          if (!f.many.empty()) std::unordered_set<std::string_view>().swap(f.many);
          ++depth;
          i = skip_space(t, i + 1);
          if (i < n && t[i] == (f.object ? '}' : ']')) {
            if (f.list) found_end = i + 1;
            --depth;
            ++i;
            expect = Expect::Next;
          } else {
            expect = f.object ? Expect::Key : Expect::Value;
          }
        } else if (c == '"') {
          if (!scan_string(t, i, false)) return false;
          expect = Expect::Next;
        } else if (c == 't' || c == 'f' || c == 'n') {
          const std::string_view word = c == 't' ? "true" : c == 'f' ? "false" : "null";
          if (t.substr(i, word.size()) != word) return false;
          i += word.size();
          expect = Expect::Next;
        } else if (c == '-' || is_digit(c)) {
          if (!scan_number(t, i)) return false;
          expect = Expect::Next;
        } else {
          return false;
        }
        break;
      }
      case Expect::Key: {
        if (i >= n || t[i] != '"') return false;
        const std::size_t start = i + 1;
        if (!scan_string(t, i, true)) return false;
        if (!add_key(frames[depth - 1], t.substr(start, i - 1 - start))) return false;
        i = skip_space(t, i);
        if (i >= n || t[i] != ':') return false;
        i = skip_space(t, i + 1);
        expect = Expect::Value;
        break;
      }
      case Expect::Next: {
        i = skip_space(t, i);
        if (depth == 0) {
          if (i != n) return false;
          *list_at = found_at;
          *list_end = found_end;
          return true;
        }
        if (i >= n) return false;
        ScanFrame& f = frames[depth - 1];
        if (t[i] == ',') {
          i = skip_space(t, i + 1);
          expect = f.object ? Expect::Key : Expect::Value;
        } else if (t[i] == (f.object ? '}' : ']')) {
          if (f.list) found_end = i + 1;
          --depth;
          ++i;
        } else {
          return false;
        }
        break;
      }
    }
  }
}

bool quick_parse(std::string_view text, nlohmann::ordered_json& out) {
  // The stacks keep their capacity from one op to the next; emptied (their
  // partial values freed) whatever the outcome. A stack grown past kKeep
  // entries by one large op gives its memory back (16 bytes an element),
  // as the old path's per-op document did.
  constexpr std::size_t kKeep = 4096;
  thread_local std::vector<QuickBuilder::Member> members;
  thread_local std::vector<nlohmann::ordered_json> elements;
  struct Empty {
    ~Empty() {
      for (auto& m : members) dismantle(m.second);
      for (auto& e : elements) dismantle(e);
      members.clear();
      elements.clear();
      if (members.capacity() > kKeep) std::vector<QuickBuilder::Member>().swap(members);
      if (elements.capacity() > kKeep) std::vector<nlohmann::ordered_json>().swap(elements);
    }
  } empty;
  return QuickBuilder(text, members, elements).document(out);
}

std::size_t json_member_at(std::string_view text, std::string_view key) {
  std::size_t i = skip_space(text, 0);
  if (i >= text.size() || text[i] != '{') return std::string_view::npos;
  i = skip_space(text, i + 1);
  while (i < text.size() && text[i] == '"') {
    const std::string k = decode_key(text, i);
    i = skip_space(text, skip_string(text, i));
    i = skip_space(text, i + 1);  // ':'
    if (k == key) return i;
    i = skip_space(text, skip_value(text, i));
    if (i < text.size() && text[i] == ',') i = skip_space(text, i + 1);
  }
  return std::string_view::npos;
}

JsonListCursor::JsonListCursor(std::string_view text, std::size_t at) : text_(text), pos_(at + 1) {}

bool JsonListCursor::next(std::string_view& element) {
  if (done_) return false;
  pos_ = skip_space(text_, pos_);
  if (pos_ >= text_.size() || text_[pos_] == ']') {
    done_ = true;
    return false;
  }
  const std::size_t end = skip_value(text_, pos_);
  element = text_.substr(pos_, end - pos_);
  pos_ = skip_space(text_, end);
  if (pos_ < text_.size() && text_[pos_] == ',') ++pos_;
  return true;
}

}  // namespace npusim::json_input
