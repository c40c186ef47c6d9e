# Shared by the benchmark projects (bench/sqlite, the generated synthetic project).
#
#   bench_setup(<PREFIX> <target>...)
#
# Adds the LTO flags to every target (object libraries included) and, with MTPC on,
# calls mtpc_enable() for the executables and shared libraries among them.
#
# Cache options it defines:
#   <PREFIX>_LTO        OFF | thin | full   (default: thin with Clang, OFF otherwise)
#   <PREFIX>_OPT        optimization flag added after the build type's (default -O2, the
#                       level of docs/performance.md's figures)
#   <PREFIX>_USE_MTPC   ON: include(MTPC) and mtpc_enable() each target (with
#                       <PREFIX>_LTO=thin or full: ThinLTO, both halves split; with
#                       <PREFIX>_LTO=OFF: mtpc_enable(<target> NO_LTO) of every target,
#                       object libraries too: the plain compiles split, the links plain)
#   <PREFIX>_MTPC_PARTITIONS   PARTITIONS passed to mtpc_enable (0: MTPC's default)
#   MTPC_DIR            MTPC source tree (with its build in <tree>/build), MTPC build tree or
#                       install prefix: MTPC.cmake is taken from <dir>/cmake or
#                       <dir>/share/mtpc/cmake (or pass -DCMAKE_MODULE_PATH=<folder>)
# ThinLTO/FullLTO builds link with lld (-fuse-ld=lld).

if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type" FORCE)
endif()

function(bench_setup prefix)
  if(CMAKE_C_COMPILER_ID MATCHES "Clang")
    set(default_lto thin)
  else()
    set(default_lto OFF)
  endif()
  set(${prefix}_LTO "${default_lto}" CACHE STRING "LTO mode: OFF, thin or full")
  set_property(CACHE ${prefix}_LTO PROPERTY STRINGS OFF thin full)
  set(${prefix}_OPT "-O2" CACHE STRING "Optimization flag for compile and link")
  option(${prefix}_USE_MTPC "Split large ThinLTO modules with MTPC (include(MTPC))" OFF)
  set(${prefix}_MTPC_PARTITIONS 0 CACHE STRING "PARTITIONS for mtpc_enable (0: default)")
  set(MTPC_DIR "" CACHE PATH "MTPC source tree or install prefix")

  set(lto "${${prefix}_LTO}")
  set(native OFF)
  if(${prefix}_USE_MTPC AND lto STREQUAL "OFF")
    set(native ON)
  elseif(${prefix}_USE_MTPC AND NOT lto STREQUAL "thin")
    message(STATUS "${prefix}_USE_MTPC=ON: using ThinLTO (${prefix}_LTO was '${lto}')")
    set(lto thin)
  endif()
  if(lto AND NOT lto STREQUAL "OFF" AND NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "${prefix}_LTO=${lto} needs Clang (configure with "
                        "-DCMAKE_C_COMPILER=clang-19), or set -D${prefix}_LTO=OFF")
  endif()

  foreach(target IN LISTS ARGN)
    get_target_property(type ${target} TYPE)
    if(${prefix}_OPT)
      target_compile_options(${target} PRIVATE ${${prefix}_OPT})
      if(type STREQUAL "EXECUTABLE" OR type STREQUAL "SHARED_LIBRARY")
        target_link_options(${target} PRIVATE ${${prefix}_OPT})
      endif()
    endif()
    if(lto STREQUAL "thin" OR lto STREQUAL "full")
      target_compile_options(${target} PRIVATE -flto=${lto})
      if(type STREQUAL "EXECUTABLE" OR type STREQUAL "SHARED_LIBRARY")
        target_link_options(${target} PRIVATE -flto=${lto} -fuse-ld=lld)
      endif()
    endif()
    if(type STREQUAL "EXECUTABLE")
      target_link_libraries(${target} PRIVATE m)
    endif()
  endforeach()

  if(${prefix}_USE_MTPC)
    if(MTPC_DIR)
      list(APPEND CMAKE_MODULE_PATH "${MTPC_DIR}/cmake" "${MTPC_DIR}/share/mtpc/cmake")
    endif()
    include(MTPC OPTIONAL RESULT_VARIABLE mtpc_found)
    if(NOT mtpc_found AND MTPC_DIR)
      # an MTPC build tree (<build>/cmake/MTPCConfig.cmake) or an install prefix
      find_package(MTPC CONFIG QUIET NO_DEFAULT_PATH
                   PATHS "${MTPC_DIR}" "${MTPC_DIR}/cmake" "${MTPC_DIR}/share/mtpc/cmake")
      if(MTPC_FOUND)
        set(mtpc_found "${MTPC_CONFIG}")
      endif()
    endif()
    if(NOT mtpc_found)
      message(FATAL_ERROR "${prefix}_USE_MTPC=ON but MTPC.cmake was not found: pass "
                          "-DMTPC_DIR=<MTPC source tree or install prefix> or "
                          "-DCMAKE_MODULE_PATH=<folder holding MTPC.cmake>")
    endif()
    set(how "")
    if(native)
      set(how NO_LTO)
    endif()
    if(${prefix}_MTPC_PARTITIONS GREATER 0)
      list(APPEND how PARTITIONS ${${prefix}_MTPC_PARTITIONS})
    endif()
    foreach(target IN LISTS ARGN)
      get_target_property(type ${target} TYPE)
      if(NOT native AND NOT type STREQUAL "EXECUTABLE" AND NOT type STREQUAL "SHARED_LIBRARY")
        continue()    # MTPC acts on link steps; object libraries just get the LTO flags
      endif()
      mtpc_enable(${target} ${how})
    endforeach()
    message(STATUS "${prefix}: MTPC enabled for ${ARGN} (${mtpc_found})")
  endif()
  message(STATUS "${prefix}: LTO=${lto}, build type ${CMAKE_BUILD_TYPE}")
endfunction()
