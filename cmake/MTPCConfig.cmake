# Package configuration of an installed MTPC (<prefix>/share/mtpc/cmake):
# find_package(MTPC) loads the MTPC module, which finds mtpc-link,
# mtpc-split and mtpc-cache in <prefix>/bin relative to its own location.
list(APPEND CMAKE_MODULE_PATH "${CMAKE_CURRENT_LIST_DIR}")
include("${CMAKE_CURRENT_LIST_DIR}/MTPC.cmake")
set(MTPC_FOUND TRUE)
