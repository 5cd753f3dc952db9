// File: shim/cupti/check.cc
//
// Failure logging for NUMTRACE_CUPTI_CHECK; see check.h.
#include "shim/cupti/check.h"

#include "shim/cupti/cupti_api.h"
#include "shim/driver/check.h"
#include "shim/log/log.h"

namespace numtrace::shim {

bool CheckCuptiResult(int code, const char* call, const char* file, int line) {
  if (code == 0) return true;
  if (!MayLogCallFailure()) return false;
  const char* what = "unknown CUPTI error";
  CuptiApi& api = CuptiApi::Instance();
  if (api.loaded()) api.cuptiGetResultString(static_cast<CUptiResult>(code), &what);
  log::Warn("{} failed: {} ({}) [{}:{}]", call, what, code, file, line);
  return false;
}

}  // namespace numtrace::shim
