# Every dependency is a Debian package (scripts/install-deps.sh installs them).
# Nothing is downloaded at configure or build time.
find_package(Threads REQUIRED)
find_package(absl CONFIG REQUIRED)        # analyzer only: Status/StatusOr, containers, strings
find_package(simdjson CONFIG REQUIRED)    # analyzer only: trace and JSON reading
find_package(ZLIB REQUIRED)                # analyzer only: gzip-compressed traces
find_package(fmt CONFIG REQUIRED)
find_package(spdlog CONFIG REQUIRED)      # shim uses spdlog::spdlog_header_only
# RE2 (linear-time matching) for every user-supplied pattern in the tools.
# Debian ships it without a CMake package: through pkg-config. Not in the
# shim: Debian's libre2.a uses local-exec TLS (cannot go into a shared
# object) and libnumtrace.so may not need a Debian shared library.
find_package(PkgConfig REQUIRED)
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)
find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND)
  find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE ${CLI11_INCLUDE_DIR})
endif()
if(NUMTRACE_BUILD_TESTS)
  find_package(GTest CONFIG REQUIRED)
endif()
if(NUMTRACE_BUILD_BENCH)
  find_package(benchmark CONFIG REQUIRED)
endif()
if(NUMTRACE_WITH_CUDA)
  find_package(CUDAToolkit QUIET)
  if(NOT CUDAToolkit_FOUND)
    message(STATUS "CUDA toolkit not found: building the shim without its CUDA layer")
    set(NUMTRACE_WITH_CUDA OFF)
  endif()
endif()
