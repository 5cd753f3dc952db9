#include "analyzer/read/trace_file_name.h"
#include "analyzer/read/text_util.h"


namespace numtrace::analyzer {
namespace {

// Parses leading decimal digits (at most 18, so no overflow) from *s.
std::optional<int64_t> TakeNumber(std::string_view* s) {
  size_t i = 0;
  int64_t v = 0;
  while (i < s->size() && i < 18 && IsDigit(((*s)[i]))) {
    v = v * 10 + ((*s)[i] - '0');
    ++i;
  }
  if (i == 0 || (i < s->size() && IsDigit(((*s)[i])))) {
    return std::nullopt;
  }
  s->remove_prefix(i);
  return v;
}

}  // namespace

std::string_view BaseName(std::string_view path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::optional<int64_t> RankFromFileName(std::string_view path, std::string_view* rest) {
  std::string_view name = BaseName(path);
  if (!ConsumePrefix(&name, "rank_")) return std::nullopt;
  std::optional<int64_t> rank = TakeNumber(&name);
  if (rank && rest != nullptr) *rest = name;
  return rank;
}

std::string_view FileStem(std::string_view path) {
  std::string_view name = BaseName(path);
  for (std::string_view suffix : {".ntrace.jsonl", ".jsonl", ".log", ".json.gz", ".json"}) {
    if (name.size() > suffix.size() && name.ends_with(suffix)) {
      name.remove_suffix(suffix.size());
      break;
    }
  }
  return name;
}

}  // namespace numtrace::analyzer
