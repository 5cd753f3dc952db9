#include "common/names/demangle.h"

#include <cxxabi.h>

#include <cstdlib>

namespace numtrace {

std::string Demangle(std::string_view symbol) {
  if (symbol.size() < 2 || symbol[0] != '_' || symbol[1] != 'Z') return std::string(symbol);
  std::string z(symbol);  // __cxa_demangle needs a terminated string
  int status = 0;
  char* d = abi::__cxa_demangle(z.c_str(), nullptr, nullptr, &status);
  if (status != 0 || d == nullptr) {
    std::free(d);
    return z;
  }
  std::string result(d);
  std::free(d);
  return result;
}

}  // namespace numtrace
