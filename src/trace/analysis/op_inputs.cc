// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/op_inputs.h"

#include <charconv>
#include <string>
#include <vector>

namespace vigil::trace {
namespace {

// A cursor over one JSON array's text; only the shapes PyTorch writes (arrays, integers,
// strings, and literals it may put in Concrete Inputs) are understood.
class Cursor {
 public:
  explicit Cursor(std::string_view t) : t_(t) {}
  void Skip() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\t' || t_[i_] == '\r'))
      ++i_;
  }
  bool Eat(char c) {
    Skip();
    if (i_ < t_.size() && t_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  char Peek() {
    Skip();
    return i_ < t_.size() ? t_[i_] : '\0';
  }
  bool Int(int64_t* v) {
    Skip();
    auto [p, ec] = std::from_chars(t_.data() + i_, t_.data() + t_.size(), *v);
    if (ec != std::errc()) return false;
    i_ = static_cast<size_t>(p - t_.data());
    return true;
  }
  bool String(std::string* s) {
    s->clear();
    if (!Eat('"')) return false;
    while (i_ < t_.size()) {
      char c = t_[i_++];
      if (c == '"') return true;
      if (c == '\\' && i_ < t_.size()) {
        char e = t_[i_++];
        switch (e) {
          case 'n':
            c = '\n';
            break;
          case 't':
            c = '\t';
            break;
          case 'u':  // non-ASCII is never a shape or dtype: keep the escape as written
            s->append("\\u");
            continue;
          default:
            c = e;
        }
      }
      s->push_back(c);
    }
    return false;
  }
  // Any JSON value, skipped (nested lists, numbers with fractions, true/false/null).
  bool SkipValue() {
    char c = Peek();
    if (c == '"') {
      std::string ignored;
      return String(&ignored);
    }
    if (c == '[' || c == '{') {
      const char close = c == '[' ? ']' : '}';
      ++i_;
      if (Eat(close)) return true;
      do {
        if (close == '}' && !(SkipValue() && Eat(':'))) return false;
        if (!SkipValue()) return false;
      } while (Eat(','));
      return Eat(close);
    }
    const size_t start = i_;
    while (i_ < t_.size() && t_[i_] != ',' && t_[i_] != ']' && t_[i_] != '}') ++i_;
    return i_ > start;
  }
  // The text of a bare literal up to the next separator (numbers, true, null).
  std::string_view Literal() {
    Skip();
    const size_t start = i_;
    while (i_ < t_.size() && t_[i_] != ',' && t_[i_] != ']') ++i_;
    std::string_view s = t_.substr(start, i_ - start);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    return s;
  }
  bool AtEnd() {
    Skip();
    return i_ == t_.size();
  }

 private:
  std::string_view t_;
  size_t i_ = 0;
};

// [[1, 2], [], [[3], [4]]]: a list of int lists; a nested list (a TensorList) is left empty.
bool ParseIntLists(std::string_view text, std::vector<std::vector<int64_t>>* out) {
  out->clear();
  if (text.empty()) return true;
  Cursor c(text);
  if (!c.Eat('[')) return false;
  if (c.Eat(']')) return c.AtEnd();
  do {
    std::vector<int64_t> dims;
    if (c.Peek() != '[') {
      if (!c.SkipValue()) return false;  // a scalar where a list was expected: no dims
    } else {
      c.Eat('[');
      if (!c.Eat(']')) {
        bool nested = false;
        do {
          int64_t v = 0;
          if (c.Peek() == '[') {
            nested = true;
            if (!c.SkipValue()) return false;
          } else if (!c.Int(&v)) {
            return false;
          } else {
            dims.push_back(v);
          }
        } while (c.Eat(','));
        if (!c.Eat(']')) return false;
        if (nested) dims.clear();
      }
    }
    out->push_back(std::move(dims));
  } while (c.Eat(','));
  return c.Eat(']') && c.AtEnd();
}

// ["float", "", 1, "[1, 2]"]: strings as written; other values as their literal text.
bool ParseStrings(std::string_view text, std::vector<std::string>* out) {
  out->clear();
  if (text.empty()) return true;
  Cursor c(text);
  if (!c.Eat('[')) return false;
  if (c.Eat(']')) return c.AtEnd();
  do {
    std::string s;
    if (c.Peek() == '"') {
      if (!c.String(&s)) return false;
    } else if (c.Peek() == '[' || c.Peek() == '{') {
      if (!c.SkipValue()) return false;
    } else {
      s = std::string(c.Literal());
    }
    out->push_back(std::move(s));
  } while (c.Eat(','));
  return c.Eat(']') && c.AtEnd();
}

}  // namespace

bool ParseRecordedInputs(std::string_view dims, std::string_view types, std::string_view strides,
                         std::string_view concrete, OpInputs* out) {
  return ParseIntLists(dims, &out->dims) && ParseStrings(types, &out->types) &&
         ParseIntLists(strides, &out->strides) && ParseStrings(concrete, &out->concrete);
}

std::optional<OpInputs> RecordedInputs(const RankTrace& t, uint32_t row) {
  if (row >= t.events.shapes.size()) return std::nullopt;
  const uint32_t index = t.events.shapes[row];
  if (index == kNoIndex || index >= t.op_shapes.size()) return std::nullopt;
  const OpShapes& s = t.op_shapes[index];
  OpInputs in;
  if (!ParseRecordedInputs(t.shape_text.Get(s.dims), t.shape_text.Get(s.types),
                           t.shape_text.Get(s.strides), t.shape_text.Get(s.concrete), &in)) {
    return std::nullopt;
  }
  return in;
}

}  // namespace vigil::trace
