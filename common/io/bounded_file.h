// File: common/io/bounded_file.h
//
// Reading a whole small input file (an --override file, a diff summary, a
// dump sidecar, a .npy array) without trusting what the path names. The
// trace readers stream through LineReader; everything else read whole goes
// through ReadBoundedFile, so that:
// - only a regular file is read: a fifo, a device (/dev/zero, /dev/stdin), a
//   socket or a directory - also behind a symbolic link - is refused at once
//   with one line naming the path and what it is (the open never blocks:
//   O_NONBLOCK, so a fifo without a writer cannot hang the command);
// - a file larger than the caller's cap is refused before anything is read,
//   with its size and the cap in the message; at most the size fstat(2) gave
//   is read, so a file that grows meanwhile cannot grow the read;
// - an allocation failure is ResourceExhausted naming the file and what it
//   was read for, never an abort and never blamed on a later stage.
//
// Example:
//   absl::StatusOr<std::string> text =
//       ReadBoundedFile(path, "the override file", kMaxOverrideFileBytes);
//   if (!text.ok()) return text.status();  // "x.txt: the override file is a fifo ..."
#ifndef NUMTRACE_COMMON_IO_BOUNDED_FILE_H_
#define NUMTRACE_COMMON_IO_BOUNDED_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace numtrace {

// `what` names the file's role in messages ("the override file").
// NotFound, PermissionDenied, InvalidArgument (not a regular file, larger
// than max_bytes), ResourceExhausted (out of memory), Unavailable (read error).
[[nodiscard]] absl::StatusOr<std::string> ReadBoundedFile(const std::string& path, std::string_view what,
                                                          uint64_t max_bytes);

// Byte counts in messages: "512 B", "2.0 KiB", "3.0 MiB", "2.5 GiB".
std::string ByteCount(uint64_t bytes);

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_IO_BOUNDED_FILE_H_
