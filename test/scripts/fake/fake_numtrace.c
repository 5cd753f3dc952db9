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
int numtrace_mark_step_to(long long next) {
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", next);
  log_line("mark_step_to", buf);
  return 0;
}
void numtrace_annotate_kernel(const char* name, const char* dtypes) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s %s", name, dtypes);
  log_line("annotate", buf);
}
/* Provenance calls: kept inert (no step is captured unless
 * $FAKE_NUMTRACE_CAPTURED names one), except the kernel ops the Triton hook
 * announces, which are logged. */
int numtrace_step_captured(long long step) {
  const char* v = getenv("FAKE_NUMTRACE_CAPTURED");
  return v != NULL && atoll(v) == step ? 1 : 0;
}
/* Environment values, logged as "env KEY VALUE" only with
 * $FAKE_NUMTRACE_ENV=1 (the other cases' logs stay as they were). */
int numtrace_set_environment(const char* key, const char* value) {
  const char* on = getenv("FAKE_NUMTRACE_ENV");
  if (on == NULL || on[0] != '1') return 0;
  char buf[1024];
  snprintf(buf, sizeof buf, "%s %s", key, value);
  log_line("env", buf);
  return 0;
}
int numtrace_scope_push(const char* fqn) { (void)fqn; return 0; }
int numtrace_scope_pop(void) { return 0; }
int numtrace_op_push(const char* op) { (void)op; return 0; }
int numtrace_op_pop(void) { return 0; }
int numtrace_set_phase(const char* phase) { (void)phase; return 0; }
int numtrace_set_src(const char* src) { (void)src; return 0; }
int numtrace_annotate_kernel_ops(const char* name, const char* ops) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s %s", name, ops);
  log_line("ops", buf);
  return 1;
}
/* Tensor map calls, logged. numtrace_tensor_map_wanted() answers
 * $FAKE_NUMTRACE_TENSOR_MAP (default 0: the feed is not wanted). */
int numtrace_tensor_map_wanted(void) {
  const char* v = getenv("FAKE_NUMTRACE_TENSOR_MAP");
  int wanted = v ? atoi(v) : 0;
  char buf[32];
  snprintf(buf, sizeof buf, "%d", wanted);
  log_line("tensor_map_wanted", buf);
  return wanted;
}
int numtrace_tensor_event(int action, int device, unsigned long long address, unsigned long long bytes) {
  char buf[128];
  snprintf(buf, sizeof buf, "%d %d %llu %llu", action, device, address, bytes);
  log_line("tensor_event", buf);
  return action >= 0 && action <= 3 ? 1 : -1;
}
int numtrace_tensor_map_status(int state, const char* detail) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%d %s", state, detail ? detail : "");
  log_line("tensor_map_status", buf);
  return 0;
}

/* Measurement pause: logged, and the depth readable by the test's job. */
static int pause_depth;
int numtrace_pause(void) { ++pause_depth; log_line("pause", NULL); return 0; }
int numtrace_resume(void) {
  if (pause_depth > 0) --pause_depth;
  log_line("resume", NULL);
  return 0;
}
int fake_pause_depth(void) { return pause_depth; }
