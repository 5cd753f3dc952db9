// File: shim/engine/dtype_name_parts.cc
//
// Bracket matching over demangled names; see dtype_name_parts.h.
#include "shim/engine/dtype_name_parts.h"

#include <cctype>

#include "common/text/trim.h"

namespace numtrace::shim::dtype_internal {
namespace {

constexpr size_t npos = std::string_view::npos;

// Bracket depth with the quirks of demangled names: `>` closes only a `<`
// (so `((8)>(0))` in an enable_if is a comparison), `->` is no bracket, and a
// closing ), }, ] also drops any `<` left open inside it (`(8)<(0)`).
class Depth {
 public:
  // Feeds s[i]; returns the depth after it.
  size_t Feed(std::string_view s, size_t i) {
    char c = s[i];
    if (c == '<' || c == '(' || c == '{' || c == '[') {
      stack_.push_back(c);
    } else if (c == '>') {
      if (!stack_.empty() && stack_.back() == '<' && !(i > 0 && s[i - 1] == '-')) stack_.pop_back();
    } else if (c == ')' || c == '}' || c == ']') {
      char open = c == ')' ? '(' : c == '}' ? '{' : '[';
      while (!stack_.empty() && stack_.back() == '<') stack_.pop_back();
      if (!stack_.empty() && stack_.back() == open) stack_.pop_back();
    }
    return stack_.size();
  }
  size_t depth() const { return stack_.size(); }

 private:
  std::string stack_;
};

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool IsLiteral(std::string_view t) {
  return t.empty() || std::isdigit(static_cast<unsigned char>(t[0])) || t[0] == '-' ||
         t[0] == '#' || t == "true" || t == "false";
}

}  // namespace

void ReplaceAll(std::string* s, std::string_view from, std::string_view to) {
  for (size_t at = s->find(from); at != std::string::npos; at = s->find(from, at + to.size())) {
    s->replace(at, from.size(), to);
  }
}

// Index of the bracket closing the one opened at s[open]; npos if none.
size_t MatchClose(std::string_view s, size_t open) {
  Depth d;
  d.Feed(s, open);
  for (size_t i = open + 1; i < s.size(); ++i) {
    if (d.Feed(s, i) == 0) return i;
  }
  return npos;
}

// Splits at depth-0 commas.
std::vector<std::string_view> SplitTopLevel(std::string_view s) {
  std::vector<std::string_view> parts;
  Depth d;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == ',' && d.depth() == 0) {
      parts.push_back(Trim(s.substr(start, i - start)));
      start = i + 1;
      continue;
    }
    d.Feed(s, i);
  }
  if (!Trim(s.substr(start)).empty()) parts.push_back(Trim(s.substr(start)));
  return parts;
}

NameParts SplitName(std::string_view s) {
  NameParts p;
  Depth d;
  size_t params_open = npos, name_start = 0, angle_open = npos, angle_close = npos;
  for (size_t i = 0; i < s.size() && params_open == npos; ++i) {
    size_t before = d.depth();
    if (before == 0 && s[i] == '(') {
      params_open = i;
      break;
    }
    size_t after = d.Feed(s, i);
    if (before == 0 && s[i] == ' ') name_start = i + 1;
    if (before == 0 && after == 1 && s[i] == '<') angle_open = i;
    if (before == 1 && after == 0 && s[i] == '>') angle_close = i;
  }
  size_t name_end = params_open == npos ? s.size() : params_open;
  p.head = Trim(s.substr(0, name_end));
  std::string_view name = Trim(s.substr(name_start, name_end - name_start));
  size_t name_offset = static_cast<size_t>(name.data() - s.data());
  if (angle_close != npos && angle_open != npos && angle_open >= name_offset &&
      angle_close + 1 == name_offset + name.size()) {
    p.qualified = s.substr(name_offset, angle_open - name_offset);
    p.targs = s.substr(angle_open + 1, angle_close - angle_open - 1);
    p.targ_list = SplitTopLevel(p.targs);
  } else {
    p.qualified = name;
  }
  if (params_open != npos) {
    size_t close = MatchClose(s, params_open);
    if (close != npos) {
      p.params = s.substr(params_open + 1, close - params_open - 1);
      p.has_params = true;
    }
  }
  return p;
}

// `c10::BFloat16 const*` -> `c10::BFloat16`; counts the pointer stars.
std::string NormalizeType(std::string_view t, int* stars) {
  std::string out;
  int n = 0;
  size_t i = 0;
  while (i < t.size()) {
    if (IsWordChar(t[i])) {
      size_t j = i;
      while (j < t.size() && IsWordChar(t[j])) ++j;
      std::string_view word = t.substr(i, j - i);
      if (word != "const" && word != "volatile" && word != "__restrict__" && word != "struct" &&
          word != "class" && word != "enum" && word != "typename") {
        if (!out.empty() && IsWordChar(out.back())) out += ' ';
        out += word;
      }
      i = j;
      continue;
    }
    if (t[i] == '*') ++n;
    if (t[i] != '*' && t[i] != '&' && t[i] != ' ') out += t[i];
    ++i;
  }
  if (stars != nullptr) *stars = n;
  return out;
}

// The type spellings of a template-argument region, in order. Function
// parameter lists inside it (the scopes of lambdas: `elu_kernel(...)`,
// `nan_to_num_kernel_cuda(..., c10::optional<double>)`) are skipped: only
// template arguments and lambda parameters name element types. The leading
// `int` of a lambda defined in a TensorIterator function is its loop index.
void CollectTypes(std::string_view r, std::vector<std::string>* out) {
  size_t tok = npos;  // start of the current token
  size_t skipped_close = npos;
  bool skipped_tensor_iterator = false;
  auto flush = [&](size_t end) {
    if (tok == npos) return;
    std::string t = NormalizeType(r.substr(tok, end - tok));
    if (!IsLiteral(t)) out->push_back(std::move(t));
    tok = npos;
  };
  for (size_t i = 0; i < r.size(); ++i) {
    char c = r[i];
    if (c == '(') {
      size_t close = MatchClose(r, i);
      if (close == npos) break;
      std::string_view before = tok == npos ? std::string_view() : Trim(r.substr(tok, i - tok));
      if (before == "lambda") {
        bool index_lambda = skipped_tensor_iterator && tok >= 4 && skipped_close == tok - 4 &&
                            r.substr(tok - 3, 2) == "::";
        tok = npos;
        std::vector<std::string> params;
        CollectTypes(r.substr(i + 1, close - i - 1), &params);
        if (index_lambda && !params.empty() && params.front() == "int") params.erase(params.begin());
        out->insert(out->end(), params.begin(), params.end());
      } else if (close + 1 < r.size() &&
                 (std::isdigit(static_cast<unsigned char>(r[close + 1])) || r[close + 1] == '-')) {
        // Nsight's `(int)4`, `(bool)1`, `(cudnnKernelDataType_t)0`: a value.
        tok = npos;
        while (close + 1 < r.size() && (IsWordChar(r[close + 1]) || r[close + 1] == '-')) ++close;
      } else {
        flush(i);
        skipped_close = close;
        skipped_tensor_iterator =
            r.substr(i, close - i).find("TensorIterator") != std::string_view::npos;
      }
      i = close;
      continue;
    }
    if (c == '<' || c == '>' || c == ',' || c == '{' || c == '}' || c == '[' || c == ']' ||
        c == ')') {
      flush(i);
      continue;
    }
    if (tok == npos && c != ' ') tok = i;
  }
  flush(r.size());
}

}  // namespace numtrace::shim::dtype_internal
