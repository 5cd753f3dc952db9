#include "common/settings/dump_selector.h"

#include <algorithm>

#include "common/names/normalize.h"
#include "common/settings/value_parsers.h"
#include "common/text/split.h"

namespace numtrace::settings {
namespace {

constexpr size_t kMaxSeqs = 4096;  // a list, not a range of the whole trace

}  // namespace

std::optional<DumpSelection> ParseDumpSelection(std::string_view text, std::string* why) {
  *why = "seq:N[,M...], NAME#K (K-th launch of kernel NAME, from 0) or regex:RE";
  DumpSelection s;
  s.text = std::string(text);
  if (text.starts_with("seq:")) {
    for (std::string_view piece : Split(text.substr(4), ',')) {
      auto n = ParseCount(piece);  // an empty item ("seq:", "seq:1,,2") is refused
      if (!n) return std::nullopt;
      s.seqs.push_back(*n);
    }
    std::sort(s.seqs.begin(), s.seqs.end());
    s.seqs.erase(std::unique(s.seqs.begin(), s.seqs.end()), s.seqs.end());
    if (s.seqs.size() > kMaxSeqs) return std::nullopt;
    s.form = DumpSelection::Form::kSeq;
    return s;
  }
  if (text.starts_with("regex:")) {
    if (text.size() == 6) return std::nullopt;
    std::string why;
    std::optional<NamePattern> re = NamePattern::Compile(text.substr(6), &why);
    if (!re) return std::nullopt;
    s.regex = std::move(*re);
    s.form = DumpSelection::Form::kRegex;
    return s;
  }
  const size_t hash = text.rfind('#');
  if (hash == std::string_view::npos || hash == 0) return std::nullopt;
  auto k = ParseCount(text.substr(hash + 1));
  if (!k) return std::nullopt;
  s.form = DumpSelection::Form::kNameCount;
  s.name = std::string(text.substr(0, hash));
  s.occurrence = *k;
  return s;
}

std::optional<DumpExpectation> ParseDumpExpectation(std::string_view text) {
  // Split at the last '@': sizes never hold one, a demangled name might.
  const size_t at = text.rfind('@');
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  DumpExpectation e;
  e.name = std::string(text.substr(0, at));
  const std::string_view sizes = text.substr(at + 1);
  if (sizes.empty()) return e;  // "NAME@": the name alone, no sizes to check
  for (std::string_view piece : Split(sizes, ',')) {
    auto n = ParseCount(piece);  // an empty item ("k@1,,2", "k@1,") is refused
    if (!n) return std::nullopt;
    e.bytes.push_back(*n);
  }
  return e;
}

bool DumpSelector::NameMatches(const KernelNames& k) {
  auto it = matches_.find(&k);
  if (it != matches_.end()) return it->second;
  bool m;
  if (sel_.form == DumpSelection::Form::kRegex) {
    m = sel_.regex.Search(k.symbol) || sel_.regex.Search(k.demangled);
  } else {
    m = k.symbol == sel_.name || k.demangled == sel_.name ||
        NormalizedName(k.demangled) == sel_.name || NormalizedName(k.symbol) == sel_.name;
  }
  matches_.emplace(&k, m);
  return m;
}

bool DumpSelector::Select(uint64_t seq, const KernelNames& kernel) {
  bool selected = false;
  switch (sel_.form) {
    case DumpSelection::Form::kSeq:
      selected = std::binary_search(sel_.seqs.begin(), sel_.seqs.end(), seq);
      if (selected) selected_.push_back(seq);
      break;
    case DumpSelection::Form::kRegex:
      selected = NameMatches(kernel);
      break;
    case DumpSelection::Form::kNameCount:
      selected = NameMatches(kernel) && seen_++ == sel_.occurrence;
      break;
  }
  any_selected_ = any_selected_ || selected;
  return selected;
}

std::string DumpSelector::Unreached(uint64_t captured) const {
  const std::string range = captured == 0 ? std::string("no launch was captured")
                                          : "the run captured seq 0.." + std::to_string(captured - 1);
  switch (sel_.form) {
    case DumpSelection::Form::kSeq: {
      std::string missing;
      for (uint64_t s : sel_.seqs) {
        if (!std::binary_search(selected_.begin(), selected_.end(), s)) {
          missing += (missing.empty() ? "" : ",") + std::to_string(s);
        }
      }
      if (missing.empty()) return "";
      return "NUMTRACE_DUMP=" + sel_.text + ": seq " + missing + " never reached (" + range +
             "): not dumped; the seq numbers are those of a run with the same capture settings";
    }
    case DumpSelection::Form::kNameCount:
      if (seen_ > sel_.occurrence) return "";
      return "NUMTRACE_DUMP=" + sel_.text + ": launch #" + std::to_string(sel_.occurrence) + " of " + sel_.name +
             " never reached (" + std::to_string(seen_) + " captured launch" + (seen_ == 1 ? "" : "es") +
             " of it): not dumped";
    case DumpSelection::Form::kRegex:
      if (any_selected_) return "";
      return "NUMTRACE_DUMP=" + sel_.text + ": no captured launch matched (" + range + "): nothing dumped";
  }
  return "";
}

}  // namespace numtrace::settings
