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
# The compiler: CYXLA_CLANG and CYXLA_CLANGXX when given (-D, or the
# environment's CYXLA_CC and CYXLA_CXX); else Debian's clang-19 and
# clang++-19 when both are on the PATH (with lld-19, wasi-libc and
# libc++-19-dev-wasm32: scripts/setup.sh); else zig (`zig cc`, `zig c++`:
# clang with its own libc++ and wasi-libc), found by cyxla_find_zig below:
# `zig` on the PATH, or the `zig` of the Python package `ziglang` (`pip
# install ziglang`). CYXLA_ZIG (-D or the environment) chooses zig, and
# which. The first zig build on a
# machine compiles zig's libc++ and wasi-libc into its cache (about a
# minute).
#
# The post-link step runs CYXLA_WASM_OPT (-D or the environment), else
# `wasm-opt` (binaryen) on the PATH. Without one the modules are built without it and configuring warns:
# they are then larger and their loops slower (guest-sdk/README.md, "C/C++
# without apt: zig").

# No WASI platform module in CMake < 3.31: a generic system with our settings.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR wasm32)

set(CYXLA_GUEST_SDK "${CMAKE_CURRENT_LIST_DIR}/.." CACHE PATH "cyxla guest-sdk directory")

# zig for cyxla guests into `out` (empty: none): `zig` on the PATH, else the Python package ziglang's: installed beside
# this SDK (the cyxla wheel's SDK is site-packages/jax_plugins/cyxla/sdk), in
# the .venv of the checkout this SDK is in, or for the `python3` on the PATH.
function(cyxla_find_zig out)
  find_program(CYXLA_ZIG_ON_PATH zig)
  if(CYXLA_ZIG_ON_PATH)
    set(${out} "${CYXLA_ZIG_ON_PATH}" PARENT_SCOPE)
    return()
  endif()
  file(GLOB candidates
    "${CYXLA_GUEST_SDK}/../../../ziglang/zig"
    "${CYXLA_GUEST_SDK}/../.venv/lib/python3*/site-packages/ziglang/zig")
  foreach(candidate IN LISTS candidates)
    if(EXISTS "${candidate}" AND NOT IS_DIRECTORY "${candidate}")
      get_filename_component(candidate "${candidate}" ABSOLUTE)
      set(${out} "${candidate}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  find_program(CYXLA_PYTHON3 python3)
  if(CYXLA_PYTHON3)
    execute_process(
      COMMAND "${CYXLA_PYTHON3}" -c
        "import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), 'zig'))"
      OUTPUT_VARIABLE zig RESULT_VARIABLE failed
      OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(NOT failed AND EXISTS "${zig}")
      set(${out} "${zig}" PARENT_SCOPE)
      return()
    endif()
  endif()
  set(${out} "" PARENT_SCOPE)
endfunction()

if(NOT DEFINED CYXLA_ZIG AND NOT "$ENV{CYXLA_ZIG}" STREQUAL "")
  set(CYXLA_ZIG "$ENV{CYXLA_ZIG}" CACHE FILEPATH "zig, the C/C++ compiler of cyxla guests")
endif()
# CYXLA_ZIG wins over CYXLA_CC and CYXLA_CXX, as in `cyxla-host new` and
# guests/cpp/build.sh; only -DCYXLA_CLANG/-DCYXLA_CLANGXX win over it.
if(NOT DEFINED CYXLA_ZIG AND NOT DEFINED CYXLA_CLANG AND NOT "$ENV{CYXLA_CC}" STREQUAL "")
  set(CYXLA_CLANG "$ENV{CYXLA_CC}" CACHE STRING "C compiler for cyxla guests")
endif()
if(NOT DEFINED CYXLA_ZIG AND NOT DEFINED CYXLA_CLANGXX AND NOT "$ENV{CYXLA_CXX}" STREQUAL "")
  set(CYXLA_CLANGXX "$ENV{CYXLA_CXX}" CACHE STRING "C++ compiler for cyxla guests")
endif()
if(NOT DEFINED CYXLA_CLANG AND NOT DEFINED CYXLA_CLANGXX AND NOT DEFINED CYXLA_ZIG)
  find_program(CYXLA_CLANG19 clang-19)
  find_program(CYXLA_CLANGXX19 clang++-19)
  if(NOT CYXLA_CLANG19 OR NOT CYXLA_CLANGXX19)
    cyxla_find_zig(zig)
    if(NOT zig)
      message(FATAL_ERROR "cyxla guests need a wasm32 C/C++ toolchain and found none: neither "
        "clang-19 and clang++-19 on the PATH nor zig (CYXLA_ZIG, zig on the PATH, or the Python "
        "package ziglang). Install one: `pip install ziglang` (no root needed), or "
        "`sudo apt-get install clang-19 lld-19 wasi-libc libc++-19-dev-wasm32 "
        "libc++abi-19-dev-wasm32 libclang-rt-19-dev-wasm32 binaryen`")
    endif()
    set(CYXLA_ZIG "${zig}" CACHE FILEPATH "zig, the C/C++ compiler of cyxla guests")
  endif()
endif()
if(DEFINED CYXLA_ZIG AND NOT DEFINED CYXLA_CLANGXX)
  # `zig cc` and `zig c++`: the compiler is zig, its first argument the mode.
  set(CMAKE_C_COMPILER "${CYXLA_ZIG}")
  set(CMAKE_C_COMPILER_ARG1 cc)
  set(CMAKE_CXX_COMPILER "${CYXLA_ZIG}")
  set(CMAKE_CXX_COMPILER_ARG1 c++)
  set(CYXLA_WITH_ZIG ON)
else()
  set(CYXLA_CLANG "clang-19" CACHE STRING "C compiler for cyxla guests")
  set(CYXLA_CLANGXX "clang++-19" CACHE STRING "C++ compiler for cyxla guests")
  set(CMAKE_C_COMPILER "${CYXLA_CLANG}")
  set(CMAKE_CXX_COMPILER "${CYXLA_CLANGXX}")
  set(CYXLA_WITH_ZIG OFF)
endif()
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
if(CYXLA_WITH_ZIG)
  # zig runs no wasm-opt itself, and links its libc++ and wasi-libc as built
  # for the link's flags (without -O: unoptimized). These are
  # guests/cpp/build.sh's, whose one command compiles and links: both builds
  # use the same libraries of zig's cache.
  set(CYXLA_LINK_OPT "-O3 -msimd128 -fno-exceptions")
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

if(CYXLA_WITH_ZIG)
  # zig's archiver, for CMake's compiler checks (static libraries): no
  # binutils needed.
  set(CMAKE_C_ARCHIVE_CREATE "\"${CYXLA_ZIG}\" ar qc <TARGET> <LINK_FLAGS> <OBJECTS>")
  set(CMAKE_CXX_ARCHIVE_CREATE "\"${CYXLA_ZIG}\" ar qc <TARGET> <LINK_FLAGS> <OBJECTS>")
  set(CMAKE_C_ARCHIVE_FINISH "\"${CYXLA_ZIG}\" ranlib <TARGET>")
  set(CMAKE_CXX_ARCHIVE_FINISH "\"${CYXLA_ZIG}\" ranlib <TARGET>")
endif()

if(NOT DEFINED CYXLA_WASM_OPT AND NOT "$ENV{CYXLA_WASM_OPT}" STREQUAL "")
  set(CYXLA_WASM_OPT "$ENV{CYXLA_WASM_OPT}" CACHE FILEPATH "wasm-opt for cyxla guests")
endif()
find_program(CYXLA_WASM_OPT wasm-opt)
# zig writes no target_features section: wasm-opt is told the features of
# its modules (zig's default wasm32 CPU, lime1, and -msimd128), else it
# refuses them as invalid.
if(CYXLA_WITH_ZIG)
  set(CYXLA_WASM_OPT_FEATURES --enable-simd --enable-bulk-memory --enable-nontrapping-float-to-int
    --enable-sign-ext --enable-mutable-globals --enable-multivalue --enable-reference-types)
else()
  set(CYXLA_WASM_OPT_FEATURES "")
endif()
# Said once a configure (CMake reads a toolchain file more than once).
get_property(cyxla_in_try_compile GLOBAL PROPERTY IN_TRY_COMPILE)
get_property(cyxla_warned GLOBAL PROPERTY CYXLA_WARNED_NO_WASM_OPT)
if(NOT CYXLA_WASM_OPT AND NOT cyxla_in_try_compile AND NOT cyxla_warned)
  set_property(GLOBAL PROPERTY CYXLA_WARNED_NO_WASM_OPT ON)
  message(WARNING "wasm-opt (binaryen) not found: cyxla guests are built without its post-link "
    "step, which makes them larger and their vectorized loops slower (guest-sdk/README.md, "
    "\"C/C++ without apt: zig\"). Install it (`sudo apt-get install binaryen`, or "
    "`cargo install wasm-opt`), or set CYXLA_WASM_OPT.")
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
  # Not with zig and debug info: binaryen 108 cannot read the DWARF 5 line
  # tables of zig's libc++ and wasi-libc.
  if(CYXLA_WASM_OPT AND NOT (CYXLA_WITH_ZIG AND CYXLA_DEBUG_INFO))
    add_custom_command(TARGET ${name} POST_BUILD
      COMMAND "${CYXLA_WASM_OPT}" -O3 ${CYXLA_WASM_OPT_DEBUG} --low-memory-unused ${CYXLA_WASM_OPT_FEATURES}
        "$<TARGET_FILE:${name}>" -o "$<TARGET_FILE:${name}>"
      VERBATIM)
  endif()
endfunction()
