# CUDA build helpers (only used when NUMTRACE_WITH_CUDA is ON).
#
# Device code is compiled by calling nvcc directly instead of enabling the
# CUDA language: no GPU architecture detection at configure time, nothing
# links libcudart, and the result is a fatbin embedded as bytes in a C++
# source that the shim loads with cuLibraryLoadData.
#
# Example:
#   numtrace_add_fatbin_library(numtrace_reduce_fatbin
#     SOURCE reduce_kernels.cu
#     FUNCTION numtrace::shim::ReductionFatbin)   # std::span<const uint8_t> F()
include_guard(GLOBAL)

# sm_80 (A100), sm_90 (H100/H200), sm_100 (B200) as SASS, plus compute_100
# PTX so newer GPUs can JIT it. -fmad=false: no FMA contraction anywhere
# (the kernels also use __dadd_rn/__dmul_rn explicitly).
set(NUMTRACE_CUDA_GENCODE
  -gencode=arch=compute_80,code=sm_80
  -gencode=arch=compute_90,code=sm_90
  "-gencode=arch=compute_100,code=[sm_100,compute_100]"
  CACHE STRING "nvcc -gencode flags for the embedded fatbin")
set(NUMTRACE_NVCC_FLAGS -std=c++20 -O3 -fmad=false --expt-relaxed-constexpr
    -ccbin ${CMAKE_CXX_COMPILER})

set(_numtrace_embed_script ${CMAKE_CURRENT_LIST_DIR}/embed_binary.cmake)

# numtrace_add_fatbin_library(<target> SOURCE <file.cu> FUNCTION <ns::Name>)
# Builds <file.cu> into a fatbin and a static PIC library <target> whose one
# function returns its bytes.
function(numtrace_add_fatbin_library target)
  cmake_parse_arguments(ARG "" "SOURCE;FUNCTION" "" ${ARGN})
  get_filename_component(src ${ARG_SOURCE} ABSOLUTE)
  get_filename_component(stem ${ARG_SOURCE} NAME_WE)
  set(fatbin ${CMAKE_CURRENT_BINARY_DIR}/${stem}.fatbin)
  set(embedded ${CMAKE_CURRENT_BINARY_DIR}/${stem}_fatbin.cc)
  add_custom_command(OUTPUT ${fatbin}
    COMMAND ${CUDAToolkit_NVCC_EXECUTABLE} -fatbin ${NUMTRACE_NVCC_FLAGS}
            -I${PROJECT_SOURCE_DIR} ${NUMTRACE_CUDA_GENCODE}
            -MD -MF ${fatbin}.d -MT ${fatbin} -o ${fatbin} ${src}
    DEPENDS ${src}
    DEPFILE ${fatbin}.d
    COMMENT "nvcc -fatbin ${ARG_SOURCE}"
    VERBATIM)
  add_custom_command(OUTPUT ${embedded}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${fatbin} -DOUTPUT=${embedded}
            -DFUNCTION=${ARG_FUNCTION} -P ${_numtrace_embed_script}
    DEPENDS ${fatbin} ${_numtrace_embed_script}
    COMMENT "embedding ${stem}.fatbin"
    VERBATIM)
  add_library(${target} STATIC ${embedded})
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
endfunction()

# numtrace_add_nvcc_host_object(<out_var> SOURCE <file.cu>)
# Compiles a .cu file's HOST code with nvcc into an object that a g++ target
# can list among its sources: proves nvcc's front end accepts shared headers
# and runs them on the host. The file must hold no kernels (no cudart needed).
function(numtrace_add_nvcc_host_object out_var)
  cmake_parse_arguments(ARG "" "SOURCE" "" ${ARGN})
  get_filename_component(src ${ARG_SOURCE} ABSOLUTE)
  get_filename_component(stem ${ARG_SOURCE} NAME_WE)
  set(obj ${CMAKE_CURRENT_BINARY_DIR}/${stem}.nvcc.o)
  add_custom_command(OUTPUT ${obj}
    COMMAND ${CUDAToolkit_NVCC_EXECUTABLE} -c ${NUMTRACE_NVCC_FLAGS}
            -Xcompiler=-fPIC,-ffp-contract=off -I${PROJECT_SOURCE_DIR}
            -arch=sm_80 -MD -MF ${obj}.d -MT ${obj} -o ${obj} ${src}
    DEPENDS ${src}
    DEPFILE ${obj}.d
    COMMENT "nvcc -c ${ARG_SOURCE}"
    VERBATIM)
  set(${out_var} ${obj} PARENT_SCOPE)
endfunction()
