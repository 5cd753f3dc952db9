// File: shim/engine/range_oracle.h
//
// A second opinion on "which allocation holds this address", asked by the
// buffer scan (buffer_scan.h) for a candidate pointer the allocation map
// does not know - memory whose allocation raised no callback numtrace saw
// (a pool allocation, a missed runtime path). The CUDA implementation asks
// the driver (shim/driver/driver_range_oracle.h: cuPointerGetAttributes:
// range start, size, mapped); tests use fakes. StepRangeCache keeps the
// answers for one captured step so each value costs one driver query a
// step at most; the engine clears it at every step end (memory may be
// freed and reused between steps).
//
// Example:
//   StepRangeCache cache(&driver_oracle);
//   std::optional<Allocation> a = cache.Confirm(ptr);   // asks once
//   cache.NewStep();                                   // step ended
#ifndef NUMTRACE_SHIM_ENGINE_RANGE_ORACLE_H_
#define NUMTRACE_SHIM_ENGINE_RANGE_ORACLE_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_set>

#include "shim/engine/alloc_map.h"

namespace numtrace::shim {

class RangeOracle {
 public:
  virtual ~RangeOracle() = default;
  // The mapped device allocation containing `address`, or nullopt when the
  // driver does not confirm one. May be called from many threads.
  virtual std::optional<Allocation> Confirm(uint64_t address) = 0;
  // A captured step ended: cached answers may be stale now.
  virtual void NewStep() {}
  // [address, address + bytes) was freed or unmapped (bytes 0: the
  // allocation starting at `address`, size unknown): forget every answer
  // that overlaps it. An expandable-segment cuMemUnmap spans several
  // cached ranges; forgetting only the one at its start left the others
  // "confirmed" for the rest of the step, and a stale word pointing there
  // was read - an MMU fault in the job (review round 4, finding 10).
  virtual void Forget(uint64_t address, uint64_t bytes) {}
};

// Caches `inner`'s answers until NewStep: confirmed ranges (any address
// inside one is answered from it) and refused values. Thread-safe.
class StepRangeCache : public RangeOracle {
 public:
  explicit StepRangeCache(RangeOracle* inner) : inner_(inner) {}
  std::optional<Allocation> Confirm(uint64_t address) override;
  void NewStep() override;
  void Forget(uint64_t address, uint64_t bytes) override;
  uint64_t queries() const { return queries_; }  // asked of `inner` (tests)

 private:
  RangeOracle* inner_;
  std::mutex mu_;
  std::map<uint64_t, Allocation> ranges_;  // by start
  std::unordered_set<uint64_t> refused_;
  uint64_t queries_ = 0;
};

// True for a value worth asking the driver about: not a small integer and
// not beyond any user-space address (most parameter words are neither).
inline bool PlausibleDevicePointer(uint64_t v) { return v >= (1ull << 16) && v < (1ull << 57); }

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_ENGINE_RANGE_ORACLE_H_
