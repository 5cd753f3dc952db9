/* Compiles shim/api/numtrace.h as C: the public header must stay C. */
#include "shim/api/numtrace.h"

typedef int (*numtrace_mark_fn)(void);

int numtrace_header_is_c(void) {
  numtrace_mark_fn f = &numtrace_mark_step;
  return f != 0;
}
