/* Stands in for libnumtrace.so in the hooks test: records each C API call
 * as a line in $FAKE_NUMTRACE_LOG so the test can check what the Python
 * hooks called, without a GPU. */
#include <stdio.h>
#include <stdlib.h>

static void log_line(const char* a, const char* b) {
  const char* path = getenv("FAKE_NUMTRACE_LOG");
  FILE* f = path ? fopen(path, "a") : NULL;
  if (!f) return;
  fprintf(f, "%s %s\n", a, b ? b : "");
  fclose(f);
}
void numtrace_mark_step(void) { log_line("mark_step", NULL); }
void numtrace_annotate_kernel(const char* name, const char* dtypes) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s %s", name, dtypes);
  log_line("annotate", buf);
}
