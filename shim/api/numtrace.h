/* File: shim/api/numtrace.h
 *
 * The public C API of libnumtrace.so. Everything here is optional: numtrace
 * captures an unmodified job. A training script uses these calls to say
 * where its steps end (NUMTRACE_STEP_MODE=mark, the default), to bracket a
 * capture explicitly (NUMTRACE_STEP_MODE=api), or to tell the dtypes of a
 * kernel whose name does not. Every call is cheap, thread-safe, and a no-op
 * while numtrace is inactive (not preloaded with CUDA up, or disabled by a
 * bad setting), so the calls can stay in production code.
 *
 * Example (C):
 *   for (int step = 0; step < steps; ++step) {
 *     train_step();
 *     numtrace_mark_step();
 *   }
 *
 * Example (Python, ctypes; the library is already loaded when preloaded):
 *   import ctypes
 *   nt = ctypes.CDLL("libnumtrace.so")
 *   nt.numtrace_annotate_kernel(b"my_fused_kernel", b"bf16,bf16,f32,i64")
 *   for batch in loader:
 *       train_step(batch)
 *       nt.numtrace_mark_step()
 */
#ifndef NUMTRACE_SHIM_API_NUMTRACE_H_
#define NUMTRACE_SHIM_API_NUMTRACE_H_

#ifdef __cplusplus
extern "C" {
#endif

/* Ends the current step (NUMTRACE_STEP_MODE=mark): launches after it belong
 * to the next step. Steps are numbered from 0. Returns 1 when numtrace is
 * capturing; 0 otherwise. Marks made before CUDA starts numtrace (before the
 * job's first kernel) are remembered and count when it starts. */
int numtrace_mark_step(void);

/* numtrace_mark_step() that also says the job's own number for the step
 * that begins: its optimizer's step count, so a run resumed from a
 * checkpoint at step 10 numbers its steps 10, 11, ... as the run that saved
 * it did, and `numtrace diff` pairs them with that run's (the PyTorch hooks
 * call it with the optimizer's count, docs/walkthroughs.md). `next` is taken
 * when it is ahead of the step that ends; then that step is recorded as
 * `next - 1` unless it was captured in full. Otherwise, and for a negative
 * `next`, it is a plain mark. Returns as numtrace_mark_step(). */
int numtrace_mark_step_to(long long next);

/* Begin and end one captured range (NUMTRACE_STEP_MODE=api): the k-th range
 * (0-based) is step k. A begin inside an open range is ignored. Return 1
 * when active, 0 otherwise. */
int numtrace_capture_begin(void);
int numtrace_capture_end(void);

/* Declares the dtype of each parameter of a kernel, overriding what its
 * name suggests (written as dtype_from "signature"). `name` is the mangled
 * symbol, the demangled name, or its function part ("at::native::foo").
 * `dtypes` lists one dtype per parameter, comma-separated, from f64 f32 f16
 * bf16 f8e4m3 f8e5m2 i64 i32 i16 i8 u8 bool raw; "-" or an empty entry keeps
 * inference for that parameter. May be called before CUDA starts.
 * Returns 0 on success, -1 on a bad name or list (a one-line message goes
 * to stderr). With numtrace off (NUMTRACE_ENABLE=0) or not configured (a bad
 * setting, already reported), returns 0 and prints nothing. */
int numtrace_annotate_kernel(const char* name, const char* dtypes);

/* Provenance: where in the model the next launches come from (trace fields
 * scope, op, phase). State is per thread: each captured launch is stamped
 * with the innermost scope and op pushed, and the phase set, on the thread
 * that launches it. `fqn` is a module path in PyTorch's style
 * ("layers.0.attention.wq"; "" is the root module), `op` an operator name
 * ("aten::mm"; for a compiler-generated kernel its source operators joined
 * with '+'). Names longer than 512 bytes are cut and counted (footer counter
 * provenance_capped); any bytes are accepted (non-UTF-8 is escaped when
 * written). A pop with nothing pushed is ignored and counted
 * (provenance_unmatched_pops). Cheap (no allocation once a thread is warm)
 * and safe from any thread. Each returns 1 when numtrace is capturing in
 * this process and did it, 0 when numtrace is inactive (nothing is kept),
 * -1 for a NULL name, an unmatched pop or a bad phase word. */
int numtrace_scope_push(const char* fqn);
int numtrace_scope_pop(void);
int numtrace_op_push(const char* op);
int numtrace_op_pop(void);
/* `phase`: "forward", "backward", "optimizer", "other", or "" to clear. */
int numtrace_set_phase(const char* phase);
/* `src`: "file:line" of the innermost user-code frame of what this thread
 * launches next (trace field src), or "" to clear. */
int numtrace_set_src(const char* src);

/* Declares the operators compiler-generated kernel `name` (its symbol, as
 * launched) was generated from, '+'-joined ("aten::addmm+aten::relu"): its
 * launches are stamped with this op instead of the launching thread's. The
 * PyTorch hooks call it for Inductor's Triton kernels. May be called before
 * CUDA starts. Returns 1 when kept, 0 when numtrace is off or not
 * configured, -1 for a NULL or empty argument. */
int numtrace_annotate_kernel_ops(const char* name, const char* ops);

/* Whether step `step` (0-based, counted as numtrace counts steps) will be
 * captured, answered from the configuration alone, so it works before CUDA
 * starts numtrace: 1 when NUMTRACE_STEPS selects it in NUMTRACE_STEP_MODE=mark
 * (the hooks count optimizer steps, which is what mark counts); 0 when it is
 * not selected, or numtrace is off or badly configured; 2 when steps are
 * delimited by something the caller cannot count (api, profiler, nvtx,
 * kernel, launches modes) and the step is not known to be excluded, or at
 * operator level in watch mode for a step not selected (every operator call
 * is handed over to be digested): a caller that wants provenance then arms
 * for every step. */
int numtrace_step_captured(long long step);

/* PyTorch's caching allocator, seen through its own trace. The allocator
 * hands out tensors from segments it got with one cudaMalloc each, so the
 * driver alone would make a whole segment one buffer. With
 * NUMTRACE_ALLOCATOR=caching (the default) the PyTorch hooks attach to the
 * allocator's trace and report its blocks and segments here, so a pointer
 * is measured as the tensor it points into (docs/configuration.md,
 * "Allocator"). Another framework allocator may report the same way.
 *
 * numtrace_tensor_map_wanted: 1 when numtrace captures in this process with
 * NUMTRACE_ALLOCATOR=caching; 0 otherwise (do not attach). */
int numtrace_tensor_map_wanted(void);
/* `action`: 0 a block was handed out (`address` its start, `bytes` the size
 * requested); 1 a block's free completed (`bytes` ignored); 2 a segment was
 * allocated or mapped; 3 a segment was freed or unmapped (`bytes` its size).
 * Thread-safe, takes no lock the caller could hold, never calls back: safe
 * from inside the allocator's lock. Returns 1 kept, 0 inactive, -1 for an
 * unknown action or a zero size (counted: footer tensor_events counts the
 * kept ones). */
int numtrace_tensor_event(int action, int device, unsigned long long address,
                          unsigned long long bytes);
/* Once per process, whether the feed is attached: `state` 1 attached, 0 it
 * failed (`detail` says why: the trace gets a note, stderr one line, and
 * buffers in the allocator's segments stay whole segments), 2 not needed
 * (another backend: every tensor is its own driver allocation). Only the
 * first call counts. Returns 1 when taken, 0 inactive, -1 for a bad state. */
int numtrace_tensor_map_status(int state, const char* detail);

/* Records one value of the trace's `environment` (docs/format.md, "The
 * header's environment"): `key` a dotted name ("torch.matmul.allow_tf32"),
 * `value` a string exactly as read ("true"). May be called before CUDA
 * starts (the value joins the header) and at any time after (a value that
 * changed is written in an `environment` record). The PyTorch hooks call it
 * once torch is imported and again when a captured step starts. Returns 0
 * kept (or numtrace off: nothing kept), -1 for NULL, an empty key, a key
 * over 128 bytes or a value over 4096 bytes (one line on stderr). */
int numtrace_set_environment(const char* key, const char* value);

/* Pause and resume measurement on the calling thread (nesting): launches in
 * between are neither measured nor counted (footer launches_paused). For
 * timing-based choices - an autotuner's benchmark - that numtrace's
 * reductions on the same stream would slow: the PyTorch hooks call them
 * around Inductor's and Triton's benchmarking. Return 1 when numtrace is
 * capturing in this process, else 0; a resume without a pause is ignored. */
int numtrace_pause(void);
int numtrace_resume(void);
/* Operator level (NUMTRACE_LEVEL=ops, `numtrace run --ops`): one record per
 * framework operator call instead of one per kernel launch, measured by
 * numtrace's own reduction: the host reduction (on all the process's cores)
 * for CPU tensors, numtrace's reduction kernels on `stream` for CUDA tensors
 * once CUDA is up; no CUPTI. The PyTorch hooks' dispatch mode calls these on
 * captured steps (docs/torch-hooks.md).
 *
 * numtrace_op_level: 1 when the process captures at operator level; starts
 * numtrace at once (no CUDA needed), so call it before the first captured
 * step. 0 at kernel level, off, or badly configured. */
int numtrace_op_level(void);

/* One tensor of an operator call. Nothing is kept after the call returns. */
typedef struct numtrace_tensor {
  unsigned long long storage;  /* the storage's data pointer (record `addr`) */
  unsigned long long offset;   /* byte offset of the first element into the storage */
  unsigned long long data;     /* where the elements are read: storage + offset (or a contiguous copy) */
  const long long* shape;      /* `ndim` sizes */
  const long long* strides;    /* `ndim` strides in elements, or NULL: contiguous */
  int ndim;                    /* 0..64 */
  int element_size;            /* bytes per element, >= 1 */
  const char* dtype;           /* f64 f32 f16 bf16 f8e4m3 f8e5m2 i64 i32 i16 i8 u8 bool; else raw */
  const char* device;          /* "cpu", "cuda:0"; any other device is not measured (said once) */
  int arg;                     /* position in the schema; results after the arguments */
  int written;                 /* 1: a result, or an argument the op may write (in-place, out=) */
} numtrace_tensor;

/* Before the operator runs: measures the tensors marked `written` (their
 * `pre`). Returns a token (>= 0) for numtrace_op_after, -1 when this op is
 * not captured (not at operator level, outside the selected steps) or on
 * bad input (NULL with count > 0, count < 0, ndim out of range,
 * element_size < 1, a dtype's size other than element_size, a NULL dtype
 * or device, a negative size or arg). */
long long numtrace_op_before(const numtrace_tensor* tensors, int count, unsigned long long stream);

/* After it ran: every tensor (arguments and results, in schema order) is
 * measured and the op's record (`name` "aten::addmm") written. Call it on
 * the thread that called numtrace_op_before, also when the op raised (the
 * arguments only). Returns 1 written, 0 not captured, -1 bad input. */
int numtrace_op_after(long long token, const char* name, const numtrace_tensor* tensors, int count,
                      unsigned long long stream);

/* 1 when this process started CUDA under numtrace (its first context was
 * created), else 0. */
int numtrace_cuda_started(void);

/* "0.1.0". */
const char* numtrace_version(void);

/* 1 when numtrace is capturing in this process (configured and started),
 * else 0. */
int numtrace_is_active(void);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* NUMTRACE_SHIM_API_NUMTRACE_H_ */
