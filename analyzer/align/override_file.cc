#include "analyzer/align/override_file.h"

#include <charconv>
#include <new>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/io/bounded_file.h"
#include "common/names/normalize.h"
#include "common/status/status_macros.h"
#include "common/text/trim.h"

namespace numtrace::analyzer {
namespace {

bool ParseUint(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

absl::Status ParseKey(std::string_view text, OverrideKey* key, std::string* why) {
  text = Trim(text);
  key->text = std::string(text);
  if (text.empty()) {
    *why = "empty key";
    return absl::InvalidArgumentError("");
  }
  if (text.substr(0, 4) == "seq:") {
    text.remove_prefix(4);
    key->by_seq = true;
    if (!ParseUint(Trim(text), &key->seq)) {
      *why = absl::StrCat("bad seq number in '", key->text, "'");
      return absl::InvalidArgumentError("");
    }
    return absl::OkStatus();
  }
  size_t hash = text.rfind('#');
  if (hash == std::string_view::npos || hash == 0) {
    *why = absl::StrCat("key '", key->text, "' is neither seq:N nor NAME#K");
    return absl::InvalidArgumentError("");
  }
  if (!ParseUint(text.substr(hash + 1), &key->occurrence)) {
    *why = absl::StrCat("bad occurrence number after '#' in '", key->text, "'");
    return absl::InvalidArgumentError("");
  }
  key->name = std::string(Trim(text.substr(0, hash)));
  return absl::OkStatus();
}

// Splits "A, B" at the comma outside <> and () (kernel names hold commas).
std::optional<size_t> TopLevelComma(std::string_view line) {
  int depth = 0;
  std::optional<size_t> found;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
    if (c == '>' || c == ')' || c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      if (found) return std::nullopt;  // more than one: ambiguous
      found = i;
    }
  }
  return found;
}

}  // namespace

absl::StatusOr<Overrides> ParseOverrides(std::string_view text, std::string_view path) {
  Overrides result;
  result.path = std::string(path);
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    line = Trim(line);
    if (line.empty() || line[0] == '#') {
      if (end == text.size()) break;
      continue;
    }
    auto fail = [&](std::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat(std::string(path), ":", line_no, ": ", std::string(why)));
    };
    std::optional<size_t> comma = TopLevelComma(line);
    if (!comma) return fail("expected 'A_KEY, B_KEY' (exactly one comma between the keys)");
    OverrideRule rule;
    rule.line = line_no;
    std::string why;
    if (!ParseKey(line.substr(0, *comma), &rule.a, &why).ok()) return fail(why);
    if (!ParseKey(line.substr(*comma + 1), &rule.b, &why).ok()) return fail(why);
    result.rules.push_back(std::move(rule));
    if (end == text.size()) break;
  }
  return result;
}

absl::StatusOr<Overrides> ReadOverrideFile(const std::string& path) {
  NT_ASSIGN_OR_RETURN(const std::string text, ReadBoundedFile(path, "the override file", kMaxOverrideFileBytes));
  try {
    return ParseOverrides(text, path);
  } catch (const std::bad_alloc&) {  // named here, not blamed on the diff after it
    return absl::ResourceExhaustedError(absl::StrCat(path, ": out of memory parsing the override file"));
  }
}

std::optional<uint32_t> ResolveOverrideKey(const OverrideKey& key, const Trace& trace) {
  const auto& kernels = trace.kernels;
  if (key.by_seq) {
    if (key.seq < kernels.size() && kernels[key.seq].seq == key.seq) {
      return static_cast<uint32_t>(key.seq);
    }
    for (size_t i = 0; i < kernels.size(); ++i) {
      if (kernels[i].seq == key.seq) return static_cast<uint32_t>(i);
    }
    return std::nullopt;
  }
  // Decide once per distinct string whether it designates NAME.
  std::vector<int8_t> matches(trace.strings.size(), -1);
  auto is_match = [&](StringId id) {
    if (matches[id] < 0) {
      std::string_view s = trace.strings.View(id);
      matches[id] = (s == key.name || NormalizedName(s) == key.name) ? 1 : 0;
    }
    return matches[id] == 1;
  };
  uint64_t seen = 0;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (is_match(kernels[i].name) || is_match(kernels[i].demangled)) {
      if (seen++ == key.occurrence) return static_cast<uint32_t>(i);
    }
  }
  return std::nullopt;
}

}  // namespace numtrace::analyzer
