#include "shim/engine/kernel_cache.h"

#include <functional>

#include "common/names/demangle.h"

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

KernelCache::KernelCache(const Config& config, const AnnotationTable* annotations)
    : config_(config),
      annotations_(annotations),
      keys_(new std::atomic<uint64_t>[kSlots]),
      values_(new std::atomic<const KernelInfo*>[kSlots]) {
  for (size_t i = 0; i < kSlots; ++i) {
    keys_[i].store(0, std::memory_order_relaxed);
    values_[i].store(nullptr, std::memory_order_relaxed);
  }
}

KernelCache::~KernelCache() = default;

uint64_t KernelCache::KeyOf(uint64_t function, std::string_view symbol) {
  // Tests and odd layers may pass no handle: key by the name then, kept
  // apart from real handles by the top bit.
  if (function != 0) return function;
  return std::hash<std::string_view>{}(symbol) | (uint64_t{1} << 63);
}

const KernelInfo* KernelCache::Find(uint64_t key) const {
  size_t i = (key * 0x9E3779B97F4A7C15ull) >> 49;  // 15 bits
  for (size_t probe = 0; probe < 64; ++probe, i = (i + 1) & (kSlots - 1)) {
    const uint64_t k = keys_[i].load(std::memory_order_acquire);
    if (k == key) return values_[i].load(std::memory_order_acquire);
    if (k == 0) return nullptr;
  }
  return nullptr;  // long probe: the entry, if any, lives in overflow_
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
  auto any = [&](const std::vector<NameFilter>& filters) {
    for (const NameFilter& f : filters) {
      if (f.Matches(info->symbol) || f.Matches(info->demangled)) return true;
    }
    return false;
  };
  info->selected = (config_.include.empty() || any(config_.include)) && !any(config_.exclude);
  if (config_.step_mode == StepMode::kKernel) {
    info->starts_step = std::regex_search(info->symbol, config_.step_regex) ||
                        std::regex_search(info->demangled, config_.step_regex);
  }
  return info;
}

const KernelInfo& KernelCache::Get(uint64_t function, std::string_view symbol) {
  const uint64_t key = KeyOf(function, symbol);
  const KernelInfo* info = Find(key);
  if (info != nullptr && (annotations_ == nullptr || info->generation == annotations_->generation()) &&
      (function == 0 || info->symbol == symbol)) {
    return *info;
  }
  return Build(key, symbol);
}

const KernelInfo& KernelCache::Build(uint64_t key, std::string_view symbol) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = overflow_.find(key); it != overflow_.end()) {
    const KernelInfo* old = it->second;
    if ((annotations_ == nullptr || old->generation == annotations_->generation()) &&
        old->symbol == symbol) {
      return *old;
    }
  }
  auto fresh = Make(symbol);
  const KernelInfo* result = fresh.get();
  owned_.push_back(std::move(fresh));
  size_t i = (key * 0x9E3779B97F4A7C15ull) >> 49;
  for (size_t probe = 0; probe < 64; ++probe, i = (i + 1) & (kSlots - 1)) {
    const uint64_t k = keys_[i].load(std::memory_order_relaxed);
    if (k == key) {  // replace (annotation changed, or the handle was reused)
      values_[i].store(result, std::memory_order_release);
      return *result;
    }
    if (k == 0) {
      values_[i].store(result, std::memory_order_release);
      keys_[i].store(key, std::memory_order_release);
      size_.fetch_add(1, std::memory_order_relaxed);
      return *result;
    }
  }
  auto [it, inserted] = overflow_.insert_or_assign(key, result);
  if (inserted) size_.fetch_add(1, std::memory_order_relaxed);
  return *result;
}

}  // namespace numtrace::shim
