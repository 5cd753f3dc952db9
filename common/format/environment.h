// File: common/format/environment.h
//
// The trace's `environment` (docs/format.md, "The header's environment"):
// what else decides a run's numbers, as flat string values under dotted
// keys. ONE table of the keys numtrace understands, in the order a diff
// shows them: what each changes in the numbers (the one-line effect the
// reports print), whether a difference is named in the verdict line, which
// kernels it touches (the first divergence card), and the process
// environment variables recorded as `env.<NAME>`. The shim, the hooks'
// C API, the analyzer, `twice` and `doctor` all read this table.
//
// Example:
//   const EnvironmentKey* k = FindEnvironmentKey("torch.matmul.allow_tf32");
//   k->effect;                                  // "TF32: fp32 matmuls ..."
//   IsRecordedVariable("NCCL_MIN_NCHANNELS");   // true: env.NCCL_MIN_NCHANNELS
#ifndef NUMTRACE_COMMON_FORMAT_ENVIRONMENT_H_
#define NUMTRACE_COMMON_FORMAT_ENVIRONMENT_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace numtrace {

// Keys in the order they were learned; a later value of a key replaces the
// earlier one (MergeEnvironment).
using EnvironmentValues = std::vector<std::pair<std::string, std::string>>;

inline constexpr std::string_view kEnvVariablePrefix = "env.";

// Which launches a setting can change (the first divergence card says so
// when its kernel is one of them).
enum class EnvAffects : uint8_t {
  kNothing,     // bookkeeping (paths, UUIDs): no launch's numbers
  kAll,         // any launch (another library, GPU, compiler)
  kMatmul,      // GEMMs and convolutions (TF32, reduced-precision reductions)
  kConv,        // convolutions (cuDNN settings)
  kAttention,   // scaled dot product attention kernels
  kAtomics,     // kernels that may accumulate with atomics (non-deterministic algorithms)
  kCollective,  // NCCL collectives
};

struct EnvironmentKey {
  // The key, or a family ending in '*' ("inductor.*", "env.NVTE_*"): the
  // first entry that matches wins, so exact keys come before their family.
  std::string_view key;
  // A difference is "known-relevant": named in the verdict line when the
  // runs diverge (TF32, reduced-precision reduction, determinism, library
  // versions, GPU model).
  bool relevant;
  EnvAffects affects;
  std::string_view effect;  // one line, for people
};

// The table, in display order.
std::span<const EnvironmentKey> EnvironmentKeys();
// The entry for `key`, or nullptr for a key the table does not know.
const EnvironmentKey* FindEnvironmentKey(std::string_view key);
// The key's position in the table (unknown keys after every known one).
size_t EnvironmentKeyOrder(std::string_view key);

// True for a process environment variable that changes numbers and is
// recorded as env.<NAME> (CUBLAS_WORKSPACE_CONFIG, NCCL_ALGO, NVTE_*, ...).
bool IsRecordedVariable(std::string_view name);
// The variable names recorded exactly (not by family), for readers that can
// only ask getenv.
std::span<const std::string_view> RecordedVariableNames();

// Sets `key` to `value` in `values`: replaces an earlier value in place or
// appends.
void SetEnvironmentValue(EnvironmentValues* values, std::string_view key, std::string_view value);
// Every value of `later` set into `base` (readers merging `environment`
// records into the header's object).
void MergeEnvironment(EnvironmentValues* base, const EnvironmentValues& later);
// The value of `key`, or nullptr.
const std::string* FindEnvironmentValue(const EnvironmentValues& values, std::string_view key);

// True when a launch named `name` (kernel symbol, demangled name or
// operator) with operator `op` is one `affects` can change.
bool EnvironmentAffectsLaunch(EnvAffects affects, std::string_view name, std::string_view op);

// Settings in one environment that allow run-to-run differences of the
// same job (what `numtrace twice` warns about and `doctor` shows): each
// {key, one line why}. `cuda`: the job runs on a GPU; `world_size` > 1:
// collectives are involved. A key absent from `values` counts as unknown,
// except the env.* variables, whose absence is itself the setting.
struct RunToRunRisk {
  std::string key;
  std::string why;
};
std::vector<RunToRunRisk> RunToRunRisks(const EnvironmentValues& values, bool cuda, int64_t world_size);

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_FORMAT_ENVIRONMENT_H_
