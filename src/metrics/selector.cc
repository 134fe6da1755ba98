// SPDX-License-Identifier: Apache-2.0
#include "metrics/selector.h"

#include <cctype>
#include <string>
#include <utility>

namespace vigil {
namespace {

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class SelectorParser {
 public:
  explicit SelectorParser(std::string_view text) : text_(text) {}

  StatusOr<SeriesSelector> Parse() {
    SeriesSelector selector;
    SkipSpace();
    if (!AtEnd() && (IsNameStart(Peek()) || Peek() == ':')) {
      while (!AtEnd() && (IsNameChar(Peek()) || Peek() == ':')) {
        selector.name.push_back(text_[pos_++]);
      }
      SkipSpace();
    }
    if (!AtEnd() && Peek() == '{') {
      ++pos_;
      VIGIL_RETURN_IF_ERROR(ParseMatchers(&selector.matchers));
      SkipSpace();
    }
    if (!AtEnd()) {
      return Error("unexpected character");
    }
    return selector;
  }

 private:
  Status ParseMatchers(std::vector<LabelMatcher>* out) {
    while (true) {
      SkipSpace();
      if (AtEnd()) {
        return Error("missing '}'");
      }
      if (Peek() == '}') {
        ++pos_;
        return OkStatus();
      }
      LabelMatcher m;
      if (!IsNameStart(Peek())) {
        return Error("expected a label name");
      }
      while (!AtEnd() && IsNameChar(Peek())) {
        m.name.push_back(text_[pos_++]);
      }
      SkipSpace();
      VIGIL_RETURN_IF_ERROR(ParseOp(&m.op));
      SkipSpace();
      VIGIL_RETURN_IF_ERROR(ParseString(&m.value));
      out->push_back(std::move(m));
      SkipSpace();
      if (AtEnd()) {
        return Error("missing '}'");
      }
      if (Peek() == ',') {
        ++pos_;
      } else if (Peek() != '}') {
        return Error("expected ',' or '}'");
      }
    }
  }

  Status ParseOp(LabelMatcher::Op* op) {
    const std::string_view rest = text_.substr(pos_);
    if (rest.starts_with("=~")) {
      *op = LabelMatcher::Op::kRe;
      pos_ += 2;
    } else if (rest.starts_with("!~")) {
      *op = LabelMatcher::Op::kNre;
      pos_ += 2;
    } else if (rest.starts_with("!=")) {
      *op = LabelMatcher::Op::kNe;
      pos_ += 2;
    } else if (rest.starts_with("=")) {
      *op = LabelMatcher::Op::kEq;
      pos_ += 1;
    } else {
      return Error("expected one of = != =~ !~");
    }
    return OkStatus();
  }

  Status ParseString(std::string* out) {
    if (AtEnd() || (Peek() != '"' && Peek() != '\'')) {
      return Error("expected a quoted label value");
    }
    const char quote = text_[pos_++];
    while (!AtEnd()) {
      const char c = text_[pos_++];
      if (c == quote) {
        return OkStatus();
      }
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (AtEnd()) {
        break;
      }
      const char e = text_[pos_++];
      switch (e) {
        case '\\':
        case '"':
        case '\'':
          out->push_back(e);
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 't':
          out->push_back('\t');
          break;
        default:
          return Error(std::string("unknown escape \\") + e);
      }
    }
    return Error("unterminated label value");
  }

  Status Error(std::string_view what) const {
    return InvalidArgumentError("selector: " + std::string(what) + " at offset " +
                                std::to_string(pos_) + " in '" + std::string(text_) + "'");
  }
  void SkipSpace() {
    while (!AtEnd() && std::isspace(static_cast<unsigned char>(Peek()))) {
      ++pos_;
    }
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return text_[pos_]; }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

StatusOr<SeriesSelector> ParseSelector(std::string_view text) {
  VIGIL_ASSIGN_OR_RETURN(SeriesSelector selector, SelectorParser(text).Parse());
  // Reject bad regexes here rather than silently matching nothing at query time.
  VIGIL_RETURN_IF_ERROR(CompiledSelector::Compile(selector).status());
  return selector;
}

StatusOr<CompiledSelector> CompiledSelector::Compile(const SeriesSelector& selector) {
  CompiledSelector out;
  out.name_ = selector.name;
  for (const LabelMatcher& spec : selector.matchers) {
    Matcher m{spec, nullptr};
    if (spec.op == LabelMatcher::Op::kRe || spec.op == LabelMatcher::Op::kNre) {
      try {
        m.regex = std::make_shared<const std::regex>(spec.value,
                                                     std::regex::ECMAScript | std::regex::optimize);
      } catch (const std::regex_error& e) {
        return InvalidArgumentError("selector: bad regex for label " + spec.name + ": " + e.what());
      }
    }
    out.matchers_.push_back(std::move(m));
  }
  return out;
}

bool CompiledSelector::Matches(std::string_view metric_name, const Labels& labels) const {
  if (!name_.empty() && metric_name != name_) {
    return false;
  }
  for (const Matcher& m : matchers_) {
    const std::string_view value =
        m.spec.name == "__name__" ? metric_name : LabelValue(labels, m.spec.name);
    bool ok = false;
    switch (m.spec.op) {
      case LabelMatcher::Op::kEq:
        ok = value == m.spec.value;
        break;
      case LabelMatcher::Op::kNe:
        ok = value != m.spec.value;
        break;
      case LabelMatcher::Op::kRe:
      case LabelMatcher::Op::kNre:
        // std::regex_match anchors at both ends, as Prometheus does. A match that exhausts the
        // regex engine (error_complexity, error_stack) counts as no match.
        try {
          ok = std::regex_match(value.begin(), value.end(), *m.regex) ==
               (m.spec.op == LabelMatcher::Op::kRe);
        } catch (const std::regex_error&) {
          ok = false;
        }
        break;
    }
    if (!ok) {
      return false;
    }
  }
  return true;
}

}  // namespace vigil
