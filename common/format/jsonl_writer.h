// File: common/format/jsonl_writer.h
//
// Serialises trace records to JSON Lines, exactly as trace format v1 says:
// one object per line, doubles in shortest round-trip form, NaN/Inf never as
// numbers (they are counted in the stats instead), hashes and addresses as hex
// strings. Appends to a caller-owned string so the shim's writer thread can
// batch many records into one write(2) and reuse the buffer.
//
// Example:
//   std::string line;
//   AppendJsonLine(kernel_record, &line);  // line ends with '\n'
#ifndef NUMTRACE_COMMON_FORMAT_JSONL_WRITER_H_
#define NUMTRACE_COMMON_FORMAT_JSONL_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/format/records.h"

namespace numtrace {

void AppendJsonLine(const TraceHeader& header, std::string* out);
void AppendJsonLine(const KernelRecord& kernel, std::string* out);
void AppendJsonLine(const NoteRecord& note, std::string* out);
void AppendJsonLine(const FooterRecord& footer, std::string* out);
void AppendJsonLine(const DigestRecord& digest, std::string* out);
void AppendJsonLine(const KernelNameRecord& name, std::string* out);
void AppendJsonLine(const EnvironmentRecord& env, std::string* out);

// Building blocks, also used by the analyzer's JSON summary writer.
// Appends `s` as a quoted JSON string. Bytes that are not valid UTF-8 are
// written as \u00XX so the line stays valid JSON whatever a name holds.
void AppendJsonString(std::string_view s, std::string* out);
// Appends a finite double in the shortest form that parses back to the same
// bits. A non-finite value is written as null (callers avoid this).
void AppendJsonDouble(double v, std::string* out);
// Appends an integer in decimal.
void AppendJsonInt(int64_t v, std::string* out);
void AppendJsonUint(uint64_t v, std::string* out);
// The fields of a stats object (section 1.3) without the braces, so other
// JSON (the HTML report's data) can embed them beside fields of its own.
// `raw` buffers get `n` and `hash` only.
void AppendStatsFields(const BufferStats& stats, DType dtype, std::string* out);
// "0x" + lowercase hex, and 16 lowercase hex digits (the `hash` field).
void AppendHexAddress(uint64_t v, std::string* out);
void AppendHash16(uint64_t v, std::string* out);

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_FORMAT_JSONL_WRITER_H_
