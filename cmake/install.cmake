# What `cmake --install build --prefix P` puts where, and the Debian package
# (`cpack -G DEB` from the build folder). Every installed program finds its
# parts relative to itself (launcher/install_layout.h), so P can be copied to
# another machine:
#
#   P/bin/numtrace, numtrace-diff, numtrace-sim   the command, the differ, the simulated job
#   P/lib/libnumtrace.so                          the capture library
#   P/include/numtrace.h                          its C API
#   P/share/numtrace/hooks/sitecustomize.py       the PyTorch hooks (and the modules beside it)
#   P/share/doc/numtrace/                         README and docs
#
# Nothing installed carries a build path: executables get no RUNPATH (they
# need only system libraries), the library is self-contained.
install(TARGETS numtrace LIBRARY DESTINATION lib)
install(TARGETS numtrace-cli numtrace-diff numtrace-sim RUNTIME DESTINATION bin)
install(FILES ${PROJECT_SOURCE_DIR}/shim/api/numtrace.h DESTINATION include)
# The hooks: launcher/CMakeLists.txt installs its one list of them.
install(FILES
  ${PROJECT_SOURCE_DIR}/README.md
  ${PROJECT_SOURCE_DIR}/docs/benchmarks.md
  ${PROJECT_SOURCE_DIR}/docs/configuration.md
  ${PROJECT_SOURCE_DIR}/docs/diffing.md
  ${PROJECT_SOURCE_DIR}/docs/format.md
  ${PROJECT_SOURCE_DIR}/docs/gpu.md
  ${PROJECT_SOURCE_DIR}/docs/reduction.md
  ${PROJECT_SOURCE_DIR}/docs/report.md
  ${PROJECT_SOURCE_DIR}/docs/report-screenshot.png
  ${PROJECT_SOURCE_DIR}/docs/walkthroughs.md
  ${PROJECT_SOURCE_DIR}/docs/troubleshooting.md
  ${PROJECT_SOURCE_DIR}/docs/torch-hooks.md
  DESTINATION share/doc/numtrace)

# Debian package. dpkg-shlibdeps derives Depends from what the binaries
# link (Abseil and simdjson for the analyzer, libstdc++, libc); python3 is
# only needed for the PyTorch hooks, hence Recommends.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME numtrace)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "find the first CUDA kernel where two training runs diverge (capture library and diff tool)")
set(CPACK_PACKAGE_CONTACT "numtrace developers <numtrace@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
include(CPack)
