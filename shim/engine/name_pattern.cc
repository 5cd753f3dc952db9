#include "shim/engine/name_pattern.h"

#include <regex>

namespace numtrace::shim {

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
    impl->re = std::regex(std::string(text), std::regex::ECMAScript | std::regex::optimize |
                                                 std::regex_constants::__polynomial);
  } catch (const std::regex_error& e) {
    *why = e.code() == std::regex_constants::error_backref ? "a back-reference (not supported)"
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
    return std::regex_search(name.begin(), name.end(), impl_->re);
  } catch (const std::exception&) {  // error_complexity/bad_alloc: never out of the shim
    return false;
  }
}

}  // namespace numtrace::shim
