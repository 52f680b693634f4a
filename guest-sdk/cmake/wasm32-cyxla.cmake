# CMake toolchain file for cyxla guests: C/C++ XLA FFI handlers compiled to
# wasm32 modules against cyxla's headers (guest-sdk/include), with the same
# flags as the documented one-line command (guest-sdk/README.md).
#
#   cmake -S . -B build -DCMAKE_TOOLCHAIN_FILE=<cyxla>/guest-sdk/cmake/wasm32-cyxla.cmake
#   cmake --build build
#
# and in CMakeLists.txt, one module per guest:
#
#   cyxla_add_guest(rms_norm_cpp rms_norm.cc)     # -> build/rms_norm_cpp.wasm
#
# cyxla_add_guest adds the cyxla runtime (guest-sdk/c/cyxla_runtime.cc, or
# cyxla_runtime.c when every source is C) to the executable, and runs
# `wasm-opt -O3 --low-memory-unused` on the module after linking, as the
# documented command does. Drop the .wasm into the host's guests folder.
#
# -DCYXLA_DEBUG_INFO=ON keeps DWARF line tables in the modules: a trap then
# names the source file and line of each frame. The same -O3 code: sources
# are compiled with -gline-tables-only, the link runs without -O (see
# below), and the post-link step is `wasm-opt -O3 -g`.
#
# Needs Debian's clang-19, lld-19, wasi-libc, libc++-19-dev-wasm32 and
# binaryen (scripts/setup.sh). Set CYXLA_CLANG (default clang-19),
# CYXLA_CLANGXX (default clang++-19) and CYXLA_WASM_OPT (default: wasm-opt
# on the PATH) to use other tools.

# No WASI platform module in CMake < 3.31: a generic system with our settings.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR wasm32)

set(CYXLA_GUEST_SDK "${CMAKE_CURRENT_LIST_DIR}/.." CACHE PATH "cyxla guest-sdk directory")
set(CYXLA_CLANG "clang-19" CACHE STRING "C compiler for cyxla guests")
set(CYXLA_CLANGXX "clang++-19" CACHE STRING "C++ compiler for cyxla guests")

set(CMAKE_C_COMPILER "${CYXLA_CLANG}")
set(CMAKE_CXX_COMPILER "${CYXLA_CLANGXX}")
set(CMAKE_C_COMPILER_TARGET wasm32-wasi)
set(CMAKE_CXX_COMPILER_TARGET wasm32-wasi)

# Compiler checks build static libraries (a guest module is a reactor).
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

option(CYXLA_DEBUG_INFO "Keep DWARF line tables in cyxla guest modules (traps name file:line)" OFF)

set(CMAKE_C_FLAGS_INIT "-std=c11 -O3 -msimd128 -mllvm -force-vector-interleave=4 -ffp-contract=off")
set(CMAKE_CXX_FLAGS_INIT "-std=c++17 -O3 -msimd128 -mllvm -force-vector-interleave=4 -ffp-contract=off -fno-exceptions -fno-rtti")
# The link gets none of the compile flags above (<FLAGS>): `-mllvm ...` is
# a compile-only flag, and clang warns of it at each link. What the link
# needs it is given here: -O3 in a release build (clang then runs wasm-opt
# after linking, as the documented one-line command does), nothing with
# debug info (with -O, clang-19 runs wasm-opt after linking without -g,
# which drops line tables).
if(CYXLA_DEBUG_INFO)
  string(APPEND CMAKE_C_FLAGS_INIT " -gline-tables-only")
  string(APPEND CMAKE_CXX_FLAGS_INIT " -gline-tables-only")
  set(CMAKE_EXE_LINKER_FLAGS_INIT "-mexec-model=reactor")
  set(CYXLA_LINK_OPT "")
  set(CYXLA_WASM_OPT_DEBUG "-g")
else()
  set(CMAKE_EXE_LINKER_FLAGS_INIT "-mexec-model=reactor -Wl,--strip-debug")
  set(CYXLA_LINK_OPT "-O3")
  set(CYXLA_WASM_OPT_DEBUG "")
endif()
set(CMAKE_C_LINK_EXECUTABLE
  "<CMAKE_C_COMPILER> --target=wasm32-wasi ${CYXLA_LINK_OPT} <CMAKE_C_LINK_FLAGS> <LINK_FLAGS> <OBJECTS> -o <TARGET> <LINK_LIBRARIES>")
set(CMAKE_CXX_LINK_EXECUTABLE
  "<CMAKE_CXX_COMPILER> --target=wasm32-wasi ${CYXLA_LINK_OPT} <CMAKE_CXX_LINK_FLAGS> <LINK_FLAGS> <OBJECTS> -o <TARGET> <LINK_LIBRARIES>")
set(CMAKE_EXECUTABLE_SUFFIX_C ".wasm")
set(CMAKE_EXECUTABLE_SUFFIX_CXX ".wasm")
set(CMAKE_C_STANDARD_INCLUDE_DIRECTORIES "${CYXLA_GUEST_SDK}/include")
set(CMAKE_CXX_STANDARD_INCLUDE_DIRECTORIES "${CYXLA_GUEST_SDK}/include")

# Search programs on the host, headers and libraries in the wasm32 sysroot.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)

find_program(CYXLA_WASM_OPT wasm-opt)
if(NOT CYXLA_WASM_OPT)
  message(FATAL_ERROR "cyxla guests need wasm-opt: install binaryen (scripts/setup.sh), or set CYXLA_WASM_OPT")
endif()

# cyxla_add_guest(<name> <source>...): the guest module <name>.wasm built from
# the sources plus the cyxla runtime.
function(cyxla_add_guest name)
  set(runtime "${CYXLA_GUEST_SDK}/c/cyxla_runtime.c")
  foreach(source IN LISTS ARGN)
    if(NOT source MATCHES "\\.c$")
      set(runtime "${CYXLA_GUEST_SDK}/c/cyxla_runtime.cc")
    endif()
  endforeach()
  add_executable(${name} ${ARGN} "${runtime}")
  set_target_properties(${name} PROPERTIES SUFFIX ".wasm")
  # Constant address offsets into the accesses' offset fields
  # (guest-sdk/README.md): the first 1 KiB of memory is never used.
  add_custom_command(TARGET ${name} POST_BUILD
    COMMAND "${CYXLA_WASM_OPT}" -O3 ${CYXLA_WASM_OPT_DEBUG} --low-memory-unused "$<TARGET_FILE:${name}>" -o "$<TARGET_FILE:${name}>"
    VERBATIM)
endfunction()
