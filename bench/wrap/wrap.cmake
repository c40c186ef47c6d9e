# wrap.cmake: shared by the bench/wrap/<project>/ wrappers, which build a real project's own,
# unmodified CMake build (a Debian source package) through MTPC or plain ThinLTO so the two
# can be compared (docs/performance-history.md, "A project MTPC was not written for").
# Include it after add_subdirectory():
#
#   include(${CMAKE_CURRENT_LIST_DIR}/../wrap.cmake)
#   wrap_targets(all ${SRC_DIR} RECURSIVE)    # or name the targets
#   wrap_enable(${all})
#
# USE_MTPC=ON (default) finds MTPC (-DMTPC_DIR=<mtpc build>/cmake) and calls mtpc_enable();
# OFF compiles with -flto=thin and links executables and shared libraries with lld.
# WRAP_LTO=OFF: no LTO in either build (a plain optimizing build): USE_MTPC=ON calls
# mtpc_enable(<target> NO_LTO) (its compiles split, its links its own), OFF changes nothing.
include_guard(DIRECTORY)
option(USE_MTPC "build through MTPC (else plain ThinLTO)" ON)
option(WRAP_LTO "ThinLTO builds (else plain optimizing builds, both)" ON)
if(USE_MTPC)
  find_package(MTPC REQUIRED)
endif()

# wrap_targets(<out> <dir> [RECURSIVE]): the targets declared in <dir> (and, RECURSIVE, in
# its subdirectories), in declaration order.
function(wrap_targets out dir)
  get_property(ts DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  if("RECURSIVE" IN_LIST ARGN)
    get_property(subs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    foreach(s IN LISTS subs)
      wrap_targets(sub ${s} RECURSIVE)
      list(APPEND ts ${sub})
    endforeach()
  endif()
  set(${out} ${ts} PARENT_SCOPE)
endfunction()

# wrap_enable(<target>...): each executable and library through MTPC or plain ThinLTO;
# other targets (custom, interface, imported) are skipped.
function(wrap_enable)
  set(enabled "")
  foreach(t IN LISTS ARGN)
    get_target_property(type ${t} TYPE)
    if(NOT type MATCHES "^(EXECUTABLE|SHARED_LIBRARY|STATIC_LIBRARY|OBJECT_LIBRARY)$")
      continue()
    endif()
    list(APPEND enabled "${t}:${type}")
    if(USE_MTPC AND NOT WRAP_LTO)
      mtpc_enable(${t} NO_LTO)
    elseif(NOT WRAP_LTO)
      # the plain build as the project writes it
    elseif(USE_MTPC)
      mtpc_enable(${t})
    else()
      # C and C++ only: a project may compile assembly too (libjpeg-turbo's nasm)
      target_compile_options(${t} PRIVATE $<$<COMPILE_LANGUAGE:C,CXX>:-flto=thin>)
      if(type MATCHES "^(EXECUTABLE|SHARED_LIBRARY)$")
        target_link_options(${t} PRIVATE -flto=thin -fuse-ld=lld)
      endif()
    endif()
  endforeach()
  message(STATUS "wrap targets: ${enabled}")
endfunction()
