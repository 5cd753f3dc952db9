#include "common/settings/name_pattern.h"

#include <regex>

namespace numtrace::settings {

struct NamePattern::Impl {
  std::regex re;
};

NamePattern::NamePattern() = default;
NamePattern::~NamePattern() = default;
NamePattern::NamePattern(const NamePattern&) = default;
NamePattern& NamePattern::operator=(const NamePattern&) = default;
NamePattern::NamePattern(NamePattern&&) noexcept = default;
NamePattern& NamePattern::operator=(NamePattern&&) noexcept = default;

std::optional<NamePattern> NamePattern::Compile(std::string_view text, std::string* why) {
  std::string ignored;
  if (why == nullptr) why = &ignored;
  if (text.empty()) {
    *why = "an empty pattern";
    return std::nullopt;
  }
  if (text.size() > kMaxPatternBytes) {
    *why = "a pattern longer than " + std::to_string(kMaxPatternBytes) + " bytes";
    return std::nullopt;
  }
  auto impl = std::make_shared<Impl>();
  try {
    // __polynomial: the breadth-first executor (name_pattern.h says why).
    constexpr auto kFlags = std::regex::ECMAScript | std::regex::optimize | std::regex_constants::__polynomial;
    // Alone first: "a)|(b" must be refused, not read as two alternatives
    // once wrapped.
    std::regex alone(std::string(text), kFlags);
    impl->re = std::regex("[\\s\\S]*?(?:" + std::string(text) + ")", kFlags);
  } catch (const std::regex_error& e) {
    // error_complexity: libstdc++'s "back-reference in polynomial mode".
    *why = e.code() == std::regex_constants::error_complexity || e.code() == std::regex_constants::error_backref
               ? "a back-reference (not supported)"
           : e.code() == std::regex_constants::error_space ? "a pattern too large to compile"
                                                             : "not a valid ECMAScript regex";
    return std::nullopt;
  } catch (const std::bad_alloc&) {
    *why = "a pattern too large to compile";
    return std::nullopt;
  }
  NamePattern p;
  p.text_ = std::string(text);
  p.impl_ = std::move(impl);
  return p;
}

bool NamePattern::Search(std::string_view name) const {
  if (!impl_) return false;
  try {
    // One pass from the first byte (the pattern starts with a lazy "any"):
    // regex_search would restart at every position, quadratic in the name.
    return std::regex_search(name.begin(), name.end(), impl_->re, std::regex_constants::match_continuous);
  } catch (const std::exception&) {  // error_complexity/bad_alloc: never out of the shim
    return false;
  }
}

}  // namespace numtrace::settings
