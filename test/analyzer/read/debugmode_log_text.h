// File: test/analyzer/read/debugmode_log_text.h
//
// Writes torchtitan activation logs for the DebugMode reader tests, in the
// layout of torchtitan/tools/activation_tracer.py's dump_captures_to_file
// (values "%.6e", "Shape: ..., Dtype: ..." on one line, "Phase:" only for
// backward ops).
//
// Example:
//   std::string log = DebugModeLogText({OpBlock{"layers.0.attention.wq/op_0_mm"}});
#ifndef NUMTRACE_TEST_ANALYZER_READ_DEBUGMODE_LOG_TEXT_H_
#define NUMTRACE_TEST_ANALYZER_READ_DEBUGMODE_LOG_TEXT_H_

#include <cstdio>
#include <string>
#include <vector>

namespace numtrace::analyzer::testing {

struct OpBlock {
  std::string key = "layers.0.attention.wq/op_0_mm";
  std::string shape = "torch.Size([4, 8])";
  std::string dtype = "torch.bfloat16";
  std::string l2 = "1.250000e+01", min = "-3.000000e+00", max = "4.500000e+00",
              mean = "2.500000e-01";
  std::string output_hash = "1.234567891234e+02";
  std::string input_hashes;  // omitted when empty
  std::string phase = "forward";
};

inline std::string DebugModeLogText(const std::vector<OpBlock>& blocks, int declared_total = -1) {
  std::string out = "Total captured activations: " +
                    std::to_string(declared_total < 0 ? blocks.size() : declared_total) + "\n";
  out += "Excluded ops dispatched: _to_copy, view\n";
  out += std::string(80, '=') + "\n\n";
  for (const OpBlock& b : blocks) {
    out += "[" + b.key + "]\n";
    out += "  Shape: " + b.shape + ", Dtype: " + b.dtype + "\n";
    out += "  L2 norm:  " + b.l2 + "\n";
    out += "  Min:      " + b.min + "\n";
    out += "  Max:      " + b.max + "\n";
    out += "  Mean:     " + b.mean + "\n";
    out += "  Output hash: " + b.output_hash + "\n";
    if (!b.input_hashes.empty()) out += "  Input hashes: " + b.input_hashes + "\n";
    out += "  Location: common/attention.py:534\n";
    if (b.phase != "forward") out += "  Phase: " + b.phase + "\n";
    out += "\n";
  }
  return out;
}

}  // namespace numtrace::analyzer::testing

#endif  // NUMTRACE_TEST_ANALYZER_READ_DEBUGMODE_LOG_TEXT_H_
