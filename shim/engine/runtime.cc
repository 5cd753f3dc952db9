#include "shim/engine/runtime.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "common/text/utf8.h"
#include "common/version/version.h"
#include "shim/engine/annotations.h"
#include "shim/engine/engine.h"
#include "common/settings/modes.h"
#include "common/settings/settings.h"
#include "common/settings/value_parsers.h"
#include "shim/log/log.h"
#include "shim/writer/trace_file.h"
#include "shim/writer/trace_writer.h"

namespace numtrace::shim {
namespace {

std::vector<std::string> ReadArgv() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> argv;
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find('\0', start);
    if (end == std::string::npos) end = all.size();
    // Any bytes, kept exactly through the JSON header (common/text/utf8.h).
    argv.push_back(Utf8FromBytes(std::string_view(all).substr(start, end - start)));
    start = end + 1;
  }
  return argv;
}

int64_t WorldSizeFromEnv(const settings::GetEnvFn& getenv) {
  for (const char* name : {"WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE"}) {
    const char* v = getenv(name);
    if (v == nullptr || *v == '\0') continue;
    char* end = nullptr;
    const long long n = std::strtoll(v, &end, 10);
    if (*end == '\0' && n > 0) return n;
  }
  return 1;
}

}  // namespace

extern "C" char** environ;

EnvironmentValues Runtime::StartEnvironment() const {
  EnvironmentValues env;
  // The variables the table names exactly, through getenv_ (a test's fake
  // environment too); then the families (NCCL_*CHANNELS*, NVTE_*, ...) by
  // name from the process environment, their values again through getenv_.
  for (std::string_view name : RecordedVariableNames()) {
    if (const char* v = getenv_(std::string(name).c_str())) {
      SetEnvironmentValue(&env, std::string(kEnvVariablePrefix) + std::string(name), v);
    }
  }
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string name(entry.substr(0, eq));
    if (!IsRecordedVariable(name)) continue;
    if (const char* v = getenv_(name.c_str())) {
      SetEnvironmentValue(&env, std::string(kEnvVariablePrefix) + name, v);
    }
  }
  if (!config_.job_git.empty()) SetEnvironmentValue(&env, "job.git", config_.job_git);
  if (!config_.job_command.empty()) SetEnvironmentValue(&env, "job.command", config_.job_command);
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) != nullptr) SetEnvironmentValue(&env, "job.cwd", cwd);
  SetEnvironmentValue(&env, "job.world_size", std::to_string(WorldSizeFromEnv(getenv_)));
  return env;
}

// A configuration error is the same in every process of a job (children
// inherit the environment): the first process prints it and marks the
// environment with the message's hash, so a fork/exec tree prints it once;
// a child with another error still prints its own.
void Runtime::ReportOncePerProcessTree(const std::string& message) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : message) h = (h ^ c) * 0x100000001b3ull;
  char mark[17];
  std::snprintf(mark, sizeof(mark), "%016llx", static_cast<unsigned long long>(h));
  const char* seen = getenv_(kReportedVar);
  if (seen != nullptr && std::string_view(seen) == mark) return;
  log::Error("{}", message);
  ::setenv(kReportedVar, mark, 1);
}

Runtime& Runtime::Get() {
  // Leaked: callbacks and atexit handlers may run after static destructors.
  static Runtime* rt = [] {
    auto* r = new Runtime([](const char* name) -> const char* { return std::getenv(name); });
    pthread_atfork([] { Runtime::Get().BeforeFork(); }, [] { Runtime::Get().AfterForkParent(); },
                   [] { Runtime::Get().AfterForkChild(); });
    return r;
  }();
  return *rt;
}

Runtime::Runtime(settings::GetEnvFn getenv) : getenv_(std::move(getenv)) {}

Runtime::~Runtime() {
  Shutdown();
  // Engine before writer before device: each uses the next.
  sink_.store(nullptr);
  engine_.reset();
  writer_.reset();
  device_.reset();
}

bool Runtime::Configure() {
  std::lock_guard<std::mutex> lock(mu_);
  if (configured_) return config_ok_;
  configured_ = true;
  std::string error;
  auto cfg = settings::ParseConfig(getenv_, &error);
  if (!cfg) {
    ReportOncePerProcessTree(error);
    // The same words as every switch: STRICT=true exits too. (A bad STRICT
    // value is itself the error and parses to nullopt: no exit.)
    const char* strict = getenv_("NUMTRACE_STRICT");
    if (strict != nullptr && settings::ParseBool(strict).value_or(false)) std::exit(2);
    return config_ok_ = false;
  }
  config_ = std::move(*cfg);
  log::SetLevel(config_.log_level);
  config_ok_ = config_.enabled;
  return config_ok_;
}

TraceHeader Runtime::MakeHeader(std::optional<DeviceInfo> info) const {
  TraceHeader h;
  h.producer = "libnumtrace " + std::string(kVersion);
  RunInfo run;
  run.label = config_.label;
  run.argv = ReadArgv();
  run.pid = getpid();
  run.rank = RankFromEnv(getenv_);
  run.world_size = WorldSizeFromEnv(getenv_);
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) run.host = host;
  run.start_time = UtcNowRfc3339();
  h.run = std::move(run);
  h.device = std::move(info);
  CaptureInfo capture;
  capture.steps = config_.steps.Listed();
  capture.outputs = std::string(settings::OutputsModeName(config_.outputs));
  capture.selector = config_.SelectorText();
  capture.level = config_.level;
  if (config_.watch != settings::WatchMode::kOff) capture.watch = std::string(settings::WatchModeName(config_.watch));
  for (const settings::Setting& s : settings::Settings()) {
    if (!s.recapture) continue;
    if (const char* v = getenv_(std::string(s.variable).c_str())) capture.settings.emplace_back(s.variable, v);
  }
  h.capture = std::move(capture);
  h.environment = StartEnvironment();
  return h;
}

EventSink* Runtime::Start(std::unique_ptr<Device> device, std::optional<DeviceInfo> info) {
  if (!Configure()) return nullptr;
  if (device != nullptr) NoteCudaStarted();
  const bool ops = config_.level == CaptureLevel::kOps;
  EventSink* sink = StartEngine(device, std::move(info));
  if (sink == nullptr || !ops) return sink;
  // Operator level: CUDA's device measures the CUDA tensors from now on,
  // also when the host started the engine first (StartOps; kept until exit).
  std::lock_guard<std::mutex> lock(mu_);
  if (device == nullptr) {
    engine_->SetOpDevice(device_.get());  // this call started the engine with it
  } else if (op_device_ == nullptr && !shut_down_.load()) {
    op_device_ = std::move(device);
    engine_->SetOpDevice(op_device_.get());
  }
  return sink;
}

EventSink* Runtime::StartOps(std::unique_ptr<Device> host) {
  if (!Configure() || config_.level != CaptureLevel::kOps) return nullptr;
  return StartEngine(host, std::nullopt);
}

EventSink* Runtime::StartEngine(std::unique_ptr<Device>& device, std::optional<DeviceInfo> info) {
  TraceWriterOptions options;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (engine_ != nullptr) return sink_.load();
    if (shut_down_.load() || device == nullptr) return nullptr;
    options.output_dir = config_.output_dir;
    options.rank = RankFromEnv(getenv_);
    options.header = MakeHeader(std::move(info));
    // The layers' values (device, libraries, hooks) after the shim's own.
    MergeEnvironment(&options.header.environment, environment_);
    options.queue_records = config_.queue_records;
  }
  EnvironmentValues in_header = options.header.environment;
  // Made outside mu_: the writer registers with the fork handlers' registry,
  // whose prepare handler takes the registry's mutex and then (handlers run
  // in reverse registration order) Runtime::mu_. Holding mu_ here would be
  // the opposite order: a fork during the first launch would deadlock.
  auto writer = std::make_unique<TraceWriter>(std::move(options));
  std::unique_lock<std::mutex> lock(mu_);
  if (engine_ != nullptr || shut_down_.load()) {
    // Another thread started (or shut down) meanwhile: this writer never
    // wrote a byte (its file is created at the first record).
    lock.unlock();
    writer.reset();
    return sink_.load();
  }
  // Values the layers added while the writer was being made: an
  // environment record (merged into the header, which is not written yet).
  EnvironmentRecord late;
  for (const auto& [key, value] : environment_) {
    const std::string* was = FindEnvironmentValue(in_header, key);
    if (was == nullptr || *was != value) SetEnvironmentValue(&late.values, key, value);
  }
  MergeEnvironment(&in_header, late.values);
  environment_ = std::move(in_header);
  if (!late.values.empty()) writer->Push(std::move(late));
  device_ = std::move(device);
  writer_ = std::move(writer);
  engine_ = std::make_unique<Engine>(config_, device_.get(), writer_.get());
  if (range_oracle_ != nullptr) engine_->SetRangeOracle(range_oracle_);
  if (config_.dump) engine_->EnableDumps(RankFromEnv(getenv_));
  for (const auto& [name, dtypes] : early_annotations_) engine_->Annotate(name, dtypes);
  early_annotations_.clear();
  // Replayed in order; only the last early mark's number can still matter
  // (the step numbers are only used from the first launch on).
  for (; early_marks_ > 1; --early_marks_) engine_->OnStepMark();
  if (early_marks_ == 1) engine_->OnStepMarkTo(early_next_);
  early_marks_ = 0;
  Engine* engine = engine_.get();
  void (*tick)(bool) = writer_tick_;
  writer_->SetPump([engine, tick] {
    engine->Pump();
    const bool step_ended = engine->TakeStepEnded();
    if (tick != nullptr) tick(step_ended);
  });
  sink_.store(engine, std::memory_order_release);
  log::Info("capturing ({}) into {}", config_.SelectorText(), config_.output_dir);
  if (this == &Get()) {
    static std::once_flag once;
    std::call_once(once, [] { std::atexit([] { Runtime::Get().Shutdown(); }); });
  }
  return engine;
}

void Runtime::NoteCudaStarted() {
  if (cuda_started_.exchange(true, std::memory_order_acq_rel)) return;
  if (!Configure() || config_.run_state_dir.empty()) return;
  const std::string path = config_.run_state_dir + "/" + std::to_string(getpid());
  // Best effort: a marker that cannot be made only costs the run its
  // definite "never started CUDA" line (it then says what it does not know).
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd >= 0) ::close(fd);
}

bool Runtime::MarkStep(int64_t next) {
  if (EventSink* s = sink()) {
    s->OnStepMarkTo(next);
    return true;
  }
  if (!Configure()) return false;
  std::lock_guard<std::mutex> lock(mu_);
  if (engine_ != nullptr) {  // Start won the race: it is running now
    engine_->OnStepMarkTo(next);
    return true;
  }
  if (!shut_down_.load()) {
    ++early_marks_;
    early_next_ = next;
  }
  return false;
}

int Runtime::StepCaptured(int64_t step) {
  if (!Configure()) return 0;
  // config_ is written once, under mu_, by the first Configure: stable now.
  if (config_.step_mode != settings::StepMode::kMark) return 2;
  if (step >= 0 && config_.steps.Contains(step)) return 1;
  // Watch mode at operator level digests every op of every step: the hooks'
  // dispatch mode must hand them over on all steps.
  return step >= 0 && config_.level == CaptureLevel::kOps && config_.watch != settings::WatchMode::kOff ? 2 : 0;
}

bool Runtime::Annotate(std::string_view kernel_name, std::string_view dtypes, std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  if (engine_ != nullptr) return engine_->Annotate(kernel_name, dtypes, error);
  AnnotationTable check;  // validate now so the caller hears about a bad list at once
  if (!check.Add(kernel_name, dtypes, error)) return false;
  early_annotations_.emplace_back(std::string(kernel_name), std::string(dtypes));
  return true;
}

void Runtime::AddEnvironment(const EnvironmentValues& values) {
  std::lock_guard<std::mutex> lock(mu_);
  if (writer_ == nullptr) {
    MergeEnvironment(&environment_, values);
    return;
  }
  EnvironmentRecord changed;
  for (const auto& [key, value] : values) {
    const std::string* was = FindEnvironmentValue(environment_, key);
    if (was != nullptr && *was == value) continue;
    SetEnvironmentValue(&changed.values, key, value);
    SetEnvironmentValue(&environment_, key, value);
  }
  if (!changed.values.empty() && !shut_down_.load()) writer_->Push(std::move(changed));
}

void Runtime::Shutdown() {
  Engine* engine;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_.exchange(true)) return;
    engine = engine_.get();
  }
  // The CUDA layer's last word (activity records matched, unmeasured
  // kernels reported) must reach the engine before its footer.
  if (engine != nullptr && before_shutdown_ != nullptr) before_shutdown_();
  if (engine != nullptr) engine->Shutdown();
  if (writer_ != nullptr && !writer_->path().empty()) log::Info("wrote {}", writer_->path());
}

std::string Runtime::trace_path() const { return writer_ ? writer_->path() : std::string(); }

void Runtime::BeforeFork() { mu_.lock(); }
void Runtime::AfterForkParent() { mu_.unlock(); }

void Runtime::AfterForkChild() {
  // The parent's engine, writer and device belong to threads and a CUDA
  // context this child does not have: forget them, never destroy them.
  sink_.store(nullptr);
  (void)engine_.release();
  (void)writer_.release();
  (void)device_.release();
  (void)op_device_.release();
  cuda_started_.store(false);
  shut_down_.store(false);
  mu_.unlock();
}

}  // namespace numtrace::shim
