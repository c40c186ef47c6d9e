# Distributed with MTPC. See docs/build-integration.md, "A project you cannot edit".
#
# Builds a CMake project through MTPC without editing it: every C/C++ executable
# and library of the project is enabled (mtpc_enable_all()).
#
#   cmake -S <project> -B <build> -G Ninja -DCMAKE_C_COMPILER=clang-19 \
#         -DCMAKE_CXX_COMPILER=clang++-19 \
#         -DCMAKE_PROJECT_INCLUDE=<prefix>/share/mtpc/cmake/mtpc-project-include.cmake
#
# From MTPC's build tree, add -DMTPC_DIR=<mtpc-build>/cmake (this file is in
# MTPC's source tree, cmake/). Where the project names its top project() (say
# project(foo)), -DCMAKE_PROJECT_foo_INCLUDE=<this file> runs it only there.
#
# CMake includes this file after every project() call; the first one finds MTPC
# and defers, to the end of the top directory's configuration (when every
# target exists), mtpc_enable_all() over the whole project. To enable less,
# copy this file and name targets to skip: mtpc_enable_all(EXCLUDE <target>...).
# Needs CMake 3.19 (cmake_language(DEFER)); an older one gets one warning and
# builds the project as usual.
include_guard(GLOBAL)
if(CMAKE_VERSION VERSION_LESS 3.19)
  message(WARNING "mtpc-project-include.cmake needs CMake 3.19 (this is ${CMAKE_VERSION}): "
    "the project builds without MTPC.")
  return()
endif()
# MTPC_DIR (-DMTPC_DIR=) wins; else the MTPC installed with this file.
find_package(MTPC REQUIRED HINTS "${CMAKE_CURRENT_LIST_DIR}")
cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}"
  CALL mtpc_enable_all DIRECTORY "${CMAKE_SOURCE_DIR}")
