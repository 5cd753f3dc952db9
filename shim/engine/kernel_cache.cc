#include "shim/engine/kernel_cache.h"

#include <functional>

#include "common/names/demangle.h"
#include "common/settings/modes.h"
#include "common/settings/name_filter.h"

namespace numtrace::shim {

std::pair<DType, DTypeSource> KernelInfo::DTypeOf(uint32_t arg) const {
  if (arg < annotated.size() && annotated[arg]) return {*annotated[arg], DTypeSource::kSignature};
  // per_arg is only ever read from the name, even when the primary is raw
  // with source default (vectorized_gather_kernel<16, long>: arg 2 is i64).
  for (const auto& [index, dtype] : inferred.per_arg) {
    if (index == arg) return {dtype, DTypeSource::kName};
  }
  return {inferred.primary, inferred.source};
}

KernelCache::KernelCache(const settings::Config& config, const AnnotationTable* annotations)
    : config_(config), annotations_(annotations) {}

KernelCache::~KernelCache() = default;

uint64_t KernelCache::KeyOf(uint64_t function, std::string_view symbol) {
  // Tests and odd layers may pass no handle: key by the name then, kept
  // apart from real handles by the top bit.
  if (function != 0) return function;
  return std::hash<std::string_view>{}(symbol) | (uint64_t{1} << 63);
}

bool KernelCache::Current(const KernelInfo* info, uint64_t function, std::string_view symbol) const {
  // Stale when an annotation arrived since, or the handle now names another
  // kernel (reused after a module unload); name keys may collide too.
  return info != nullptr &&
         (annotations_ == nullptr || info->generation == annotations_->generation()) &&
         (function == 0 ? info->symbol == symbol : (symbol.empty() || info->symbol == symbol));
}

std::unique_ptr<KernelInfo> KernelCache::Make(std::string_view symbol) const {
  auto info = std::make_unique<KernelInfo>();
  info->symbol = std::string(symbol);
  info->demangled = Demangle(symbol);
  info->inferred = InferKernelDTypes(info->demangled);
  if (annotations_) {
    info->generation = annotations_->generation();
    if (auto a = annotations_->Lookup(info->symbol, info->demangled)) info->annotated = std::move(*a);
  }
  auto any = [&](const std::vector<settings::NameFilter>& filters) {
    for (const settings::NameFilter& f : filters) {
      if (f.Matches(info->symbol) || f.Matches(info->demangled)) return true;
    }
    return false;
  };
  info->selected = (config_.include.empty() || any(config_.include)) && !any(config_.exclude);
  if (config_.step_mode == settings::StepMode::kKernel) {
    info->starts_step = config_.step_regex.Search(info->symbol) || config_.step_regex.Search(info->demangled);
  }
  return info;
}

const KernelInfo& KernelCache::Get(uint64_t function, std::string_view symbol) {
  const uint64_t key = KeyOf(function, symbol);
  const KernelInfo* info = table_.Find(key);
  if (Current(info, function, symbol)) return *info;
  return Build(key, function, symbol);
}

const KernelInfo& KernelCache::Build(uint64_t key, uint64_t function, std::string_view symbol) {
  std::lock_guard<std::mutex> lock(mu_);
  const KernelInfo* info = table_.Find(key);
  if (Current(info, function, symbol)) return *info;  // another thread built it
  return *table_.Publish(key, Make(symbol));
}

}  // namespace numtrace::shim
