#include "common/names/normalize.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "common/names/demangle.h"

namespace numtrace {
namespace {

bool IsIdent(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

void ReplaceAll(std::string* s, std::string_view from, std::string_view to) {
  size_t pos = 0;
  while ((pos = s->find(from, pos)) != std::string::npos) {
    s->replace(pos, from.size(), to);
    pos += to.size();
  }
}

// Index of the ')' matching the '(' at `open`, or npos.
size_t MatchParen(const std::string& s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    if (s[i] == ')' && --depth == 0) return i;
  }
  return std::string::npos;
}

// `[lambda(int) (instance 1)]` (EDG/Nsight) and `{lambda(int)#1}` (Itanium)
// both become `{lambda[int]#1}`. The parameter types stay (they carry the
// dtype: `{lambda(c10::BFloat16)#1}`), in brackets so that dropping
// parameter lists later leaves them alone.
void RewriteLambdas(std::string* s) {
  for (size_t pos = 0; (pos = s->find("[lambda(", pos)) != std::string::npos;) {
    size_t close = MatchParen(*s, pos + 7);
    size_t end = close == std::string::npos ? close : s->find(']', close);
    if (end == std::string::npos) break;
    std::string args = s->substr(pos + 8, close - pos - 8);
    std::string inner = s->substr(close + 1, end - close - 1);  // " (instance 1)"
    std::string n;
    for (char c : inner) if (IsDigit(c)) n += c;
    std::string repl = "{lambda[" + args + "]#" + (n.empty() ? std::string("1") : n) + "}";
    s->replace(pos, end - pos + 1, repl);
    pos += repl.size();
  }
  for (size_t pos = 0; (pos = s->find("{lambda(", pos)) != std::string::npos;) {
    size_t close = MatchParen(*s, pos + 7);
    if (close == std::string::npos) break;
    (*s)[pos + 7] = '[';
    (*s)[close] = ']';
    pos = close;
  }
}

void CanonicalAnon(std::string* s) {
  ReplaceAll(s, "(anonymous namespace)", "{anon}");
  ReplaceAll(s, "<unnamed>", "{anon}");
  ReplaceAll(s, "operator()", "operator_call");
}

// The last character written that is not a space ('\0' if none): what a
// `(` follows decides whether it opens a cast or a parameter list.
char LastNonSpace(const std::string& out) {
  const size_t k = out.find_last_not_of(' ');
  return k == std::string::npos ? '\0' : out[k];
}

// `(int)4` -> `4`, `(bool)1` -> `true`, `(cub::BlockLoadAlgorithm)3` -> `3`:
// Nsight prints template values with their type, kineto without.
std::string DropValueCasts(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(') {
      const char prev = LastNonSpace(out);
      size_t close = s.find(')', i);
      if ((prev == '<' || prev == ',') && close != std::string::npos) {
        std::string_view type(s.data() + i + 1, close - i - 1);
        size_t v = close + 1;
        bool is_cast = type.find_first_of("(,<") == std::string_view::npos &&
                       v < s.size() && (IsDigit(s[v]) || (s[v] == '-' && v + 1 < s.size() && IsDigit(s[v + 1])));
        if (is_cast) {
          if (type == "bool") {
            out += s[v] == '0' ? "false" : "true";
            i = v;  // skip the digit
          } else {
            i = close;
          }
          continue;
        }
      }
    }
    out += s[i];
  }
  return out;
}

// `3ul`, `4096UL`, `7l` -> the bare number.
std::string DropIntegerSuffixes(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    if (IsDigit(s[i]) && (i == 0 || !IsIdent(s[i - 1]))) {  // a literal, not part of a name
      while (i < s.size() && IsDigit(s[i])) out += s[i++];
      size_t k = i;
      while (k < s.size() && (s[k] == 'u' || s[k] == 'U' || s[k] == 'l' || s[k] == 'L')) ++k;
      if (k > i && (k == s.size() || !IsIdent(s[k]))) i = k;
      continue;
    }
    out += s[i++];
  }
  return out;
}

// Removes every parameter list `name(...)` with the cv/ref qualifiers after it.
std::string DropParameterLists(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(') {
      const char prev = LastNonSpace(out);
      if (IsIdent(prev) || prev == '>' || prev == ']' || prev == '}') {
        size_t close = MatchParen(s, i);
        if (close == std::string::npos) break;  // unbalanced tail: drop it
        i = close;
        for (;;) {
          size_t j = i + 1;
          while (j < s.size() && s[j] == ' ') ++j;
          if (s.compare(j, 5, "const") == 0 && (j + 5 == s.size() || !IsIdent(s[j + 5]))) {
            i = j + 4;
          } else if (s.compare(j, 8, "volatile") == 0 && (j + 8 == s.size() || !IsIdent(s[j + 8]))) {
            i = j + 7;
          } else if (j < s.size() && s[j] == '&') {
            i = j;
          } else {
            break;
          }
        }
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

// Drops the return type: everything up to the last space outside <> and ().
std::string DropReturnType(const std::string& s) {
  int depth = 0;
  size_t last = std::string::npos;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
    if (c == '>' || c == ')' || c == ']' || c == '}') --depth;
    if (c == ' ' && depth == 0) last = i;
  }
  return last == std::string::npos ? s : s.substr(last + 1);
}

// Removes spaces except between two identifier characters; drops the word
// `void` before a qualified name (Nsight prints nested return types).
std::string SqueezeSpaces(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != ' ') {
      out += s[i];
      continue;
    }
    char prev = out.empty() ? '\0' : out.back();
    size_t j = i;
    while (j < s.size() && s[j] == ' ') ++j;
    char next = j < s.size() ? s[j] : '\0';
    if (IsIdent(prev) && IsIdent(next)) {
      // "void at::x" inside template arguments: a return type, drop it.
      size_t w = out.size() >= 4 ? out.size() - 4 : 0;
      if (out.size() >= 4 && out.compare(w, 4, "void") == 0 && (w == 0 || !IsIdent(out[w - 1]))) {
        out.erase(w);
      } else {
        out += ' ';
      }
    }
    i = j - 1;
  }
  return out;
}

// Drops template arguments that are plain integers: `<4,X,-2>` -> `<X>`.
std::string DropIntegerTemplateArgs(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char last = out.empty() ? '\0' : out.back();
    if (last == '<' || (last == ',' )) {
      size_t j = i;
      if (j < s.size() && s[j] == '-') ++j;
      size_t d = j;
      while (j < s.size() && IsDigit(s[j])) ++j;
      // A sole argument is kept: `OpaqueType<4>` is an element size.
      bool sole = last == '<' && j < s.size() && s[j] == '>';
      if (j > d && j < s.size() && (s[j] == ',' || s[j] == '>') && !sole) {
        if (s[j] == ',') {
          i = j;  // skip digits and the comma
          continue;
        }
        if (last == ',') out.pop_back();
        i = j - 1;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

// `triton__0d1d23d` -> `triton__4args`; `triton_poi_fused_add_3` ->
// `triton_poi_fused_add`. Other names unchanged.
std::string CanonicalTriton(const std::string& s) {
  if (s.rfind("triton_", 0) != 0) return s;
  if (s.rfind("triton__", 0) == 0 && s.size() > 8 && IsDigit(s[8])) {
    size_t pos = 8;
    int index = 0;
    while (pos < s.size()) {
      std::string want = std::to_string(index);
      if (s.compare(pos, want.size(), want) != 0) break;
      pos += want.size();
      while (pos < s.size() && std::islower(static_cast<unsigned char>(s[pos]))) ++pos;
      ++index;
    }
    if (pos == s.size()) return "triton__" + std::to_string(index) + "args";
    return s;
  }
  size_t us = s.rfind('_');
  if (us != std::string::npos && us + 1 < s.size() &&
      std::all_of(s.begin() + us + 1, s.end(), IsDigit) && us > 7) {
    return s.substr(0, us);
  }
  return s;
}

bool IsDebugModeKey(std::string_view name) {
  return name.find('/') != std::string_view::npos &&
         name.find_first_of(" ()<>") == std::string_view::npos;
}

// `FSDPLlama3Model.layers.0.x/op_3_mm` -> `layers.0.x/mm`.
std::string NormalizeDebugModeKey(std::string_view name) {
  size_t slash = name.rfind('/');
  std::string path(name.substr(0, slash));
  std::string op(name.substr(slash + 1));
  if (op.rfind("op_", 0) == 0) {
    size_t j = 3;
    while (j < op.size() && IsDigit(op[j])) ++j;
    if (j > 3 && j < op.size() && op[j] == '_') op = op.substr(j + 1);
  }
  size_t dot = path.find('.');
  if (dot != std::string::npos && dot > 0 && std::isupper(static_cast<unsigned char>(path[0])) &&
      std::any_of(path.begin(), path.begin() + dot,
                  [](char c) { return std::islower(static_cast<unsigned char>(c)); })) {
    path = path.substr(dot + 1);
  }
  return path + "/" + op;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool Has(const std::string& s, std::string_view what) { return s.find(what) != std::string::npos; }

}  // namespace

std::string ShortName(std::string_view name) {
  std::string s = Demangle(name);
  CanonicalAnon(&s);
  RewriteLambdas(&s);
  s = DropParameterLists(s);
  s = DropReturnType(s);
  ReplaceAll(&s, "{anon}::", "");
  // Elide top-level template arguments unless they are one identifier.
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '<') {
      out += s[i];
      continue;
    }
    int depth = 0;
    size_t close = i;
    for (; close < s.size(); ++close) {
      if (s[close] == '<') ++depth;
      if (s[close] == '>' && --depth == 0) break;
    }
    std::string_view inner(s.data() + i + 1, std::min(close, s.size()) - i - 1);
    bool plain = !inner.empty() && inner.size() <= 80 &&
                 std::all_of(inner.begin(), inner.end(), [](char c) { return IsIdent(c) || c == ':'; });
    if (plain) {
      out += '<';
      out += inner;
      out += '>';
    } else {
      out += "<...>";
    }
    i = close;
  }
  std::string r = SqueezeSpaces(out);
  return r.empty() ? std::string(name) : r;
}

std::string NormalizedName(std::string_view name) {
  if (IsDebugModeKey(name)) return NormalizeDebugModeKey(name);
  std::string s = Demangle(name);
  CanonicalAnon(&s);
  RewriteLambdas(&s);
  s = DropValueCasts(s);
  s = DropIntegerSuffixes(s);
  s = DropParameterLists(s);
  s = DropReturnType(s);
  s = SqueezeSpaces(s);
  ReplaceAll(&s, "at::detail::Array<", "std::array<");
  s = DropIntegerTemplateArgs(s);
  s = CanonicalTriton(s);
  return s.empty() ? std::string(name) : s;
}

std::string KernelFamily(std::string_view name) {
  std::string full = Demangle(name);
  std::string lower = Lower(full);
  std::string normalized = NormalizedName(name);
  if (normalized.rfind("triton_", 0) == 0 || IsDebugModeKey(name)) return normalized;
  if (Has(lower, "nccl")) {
    // Longest names first: ReduceScatter before Reduce.
    static constexpr std::string_view kCollectives[] = {
        "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "SendRecv",
        "AllToAll", "Reduce", "Send", "Recv"};
    for (std::string_view c : kCollectives) {
      if (Has(full, c)) return "nccl:" + std::string(c);
    }
    return "nccl";
  }
  if (Has(lower, "flash") || Has(lower, "fmha") || Has(lower, "attention") || Has(lower, "sdpa")) {
    return "attention";
  }
  ReplaceAll(&lower, "fbgemm", "");  // FBGEMM's embedding kernels are not GEMMs
  if (Has(lower, "cudnn") && (Has(lower, "conv") || Has(lower, "fprop") || Has(lower, "dgrad") ||
                              Has(lower, "wgrad"))) {
    return "conv";
  }
  if (Has(lower, "implicit_convolve") || Has(lower, "fprop_implicit") || Has(lower, "dgrad") ||
      Has(lower, "wgrad")) {
    return "conv";
  }
  if (Has(lower, "gemm") || Has(lower, "gemv") || Has(lower, "nvjet") || Has(lower, "xmma") ||
      Has(lower, "cublas") || Has(lower, "cutlass") || Has(lower, "splitkreduce")) {
    return "gemm";
  }
  return normalized;
}

}  // namespace numtrace
