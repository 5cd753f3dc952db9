# Sourced by build.sh and fuzz.sh: sets `compiler_cache` to the cmake
# arguments that put ccache in front of the compilers. Paths are made
# relative to / (CCACHE_BASEDIR), so a second checkout of the same sources -
# check-standalone.sh's clone in a temporary folder, a git worktree - reuses
# the objects instead of compiling the tree again. A launcher the caller
# already chose (CMAKE_CXX_COMPILER_LAUNCHER in the environment) is left
# alone; NUMTRACE_CCACHE=0 turns ccache off (and clears it from a build
# folder configured with it).
compiler_cache=()
if [ "${NUMTRACE_CCACHE:-1}" = 0 ]; then
  compiler_cache=(-DCMAKE_C_COMPILER_LAUNCHER= -DCMAKE_CXX_COMPILER_LAUNCHER= -DCMAKE_CUDA_COMPILER_LAUNCHER=)
elif [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ] && command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-/}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
  compiler_cache=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
                  -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
