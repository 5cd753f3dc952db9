# Sourced by build.sh, fuzz.sh and mutants.sh with the checkout as its
# argument (`. scripts/compiler-cache.sh CHECKOUT`): sets `compiler_cache` to the cmake
# arguments that put ccache in front of the compilers. Paths inside the
# checkout are made relative (CCACHE_BASEDIR), so
# a second checkout of the same sources - check-standalone.sh's clone in a
# temporary folder, a git worktree - reuses the objects instead of compiling
# the tree again. The base is the checkout, not /: with / the system headers
# became relative too, and their depth differs between /work/main/build and
# /tmp/x/numtrace/build, so nothing matched. The settings travel in the
# launcher itself (`env CCACHE_BASEDIR=... ccache`), not in this shell's
# environment, so a later `ninja -C build` or `cmake --build build` typed by
# hand caches exactly as build.sh does. A launcher the caller
# already chose (CMAKE_CXX_COMPILER_LAUNCHER in the environment) is left
# alone; NUMTRACE_CCACHE=0 turns ccache off (and clears it from a build
# folder configured with it).
compiler_cache=()
if [ "${NUMTRACE_CCACHE:-1}" = 0 ]; then
  compiler_cache=(-DCMAKE_C_COMPILER_LAUNCHER= -DCMAKE_CXX_COMPILER_LAUNCHER= -DCMAKE_CUDA_COMPILER_LAUNCHER=)
elif [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ] && command -v ccache >/dev/null; then
  launcher="env;CCACHE_BASEDIR=${1:?the checkout};CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1};ccache"
  compiler_cache=("-DCMAKE_C_COMPILER_LAUNCHER=$launcher" "-DCMAKE_CXX_COMPILER_LAUNCHER=$launcher"
                  "-DCMAKE_CUDA_COMPILER_LAUNCHER=$launcher")
  unset launcher
fi
