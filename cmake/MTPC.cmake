# Distributed with MTPC (multi-threaded partitioned compilation of ThinLTO
# backends). See docs/build-integration.md.

#[=======================================================================[.rst:
MTPC
----

Build the huge translation units of a target in parallel, per call-graph
partition: their compiles (plain or ThinLTO) and, in a ThinLTO build, their
backends inside the link.

Load it with ``find_package(MTPC)`` (package config installed in
``<prefix>/share/mtpc/cmake``, or generated in MTPC's build tree at
``<build>/cmake``) or ``include(MTPC)`` with that directory on
``CMAKE_MODULE_PATH``. A project that cannot be edited can be built through
MTPC with ``-DCMAKE_PROJECT_INCLUDE=<dir>/mtpc-project-include.cmake``
(installed next to this module; see ``mtpc_enable_all``).

Needs CMake 3.14 (3.19 to find the targets that link an enabled static or
object library, see ``mtpc_enable``). The module sets the policies it needs
itself (``cmake_policy(PUSH)``, ``cmake_policy(VERSION 3.14...3.25)``,
``cmake_policy(POP)``; its functions keep them when called), so it works in a
project whose ``cmake_minimum_required`` is older (2.8.12, say) and leaves
that project's policy settings as they were.

Commands
^^^^^^^^

.. command:: mtpc_enable

  ::

    mtpc_enable(<target> [LTO|NO_LTO] [PARTITIONS <n>] [COST <instructions>] [THRESHOLD <bytes>])

  With ``NO_LTO`` (or ``MTPC_LTO=OFF`` and neither keyword), the target keeps
  its own compiles and its own link: only its costly C and C++ compiles run
  through ``mtpc-compile``, which splits a plain optimizing compile into
  partitions that are optimized and compiled to native code in parallel and
  merged into the one object the build expects (the build developers run
  every day; no Ninja generator or Clang version beyond MTPC's own needed).
  The rest of this section is about ``LTO`` (the default):

  Compiles ``<target>`` with ``-flto=thin`` and, for executables and shared
  or module libraries, links it with ``-flto=thin -fuse-ld=lld`` through
  MTPC in one of two modes (``MTPC_MODE``):

  ``launcher``
    ``mtpc-link`` runs the link (set as ``C_LINKER_LAUNCHER`` and
    ``CXX_LINKER_LAUNCHER``). Links run side by side; the compiles of their
    inner builds share one budget of jobs for the machine (the cores, or
    ``MTPC_JOB_SLOTS`` in the environment; make's jobserver when the outer
    build is GNU make's). Needs a Ninja generator; any Clang from 19.
  ``dtlto``
    lld's Distributed ThinLTO runs ``mtpc-distribute`` as its distributor
    (``-fthinlto-distributor=``, options as ``-Xthinlto-distributor=``): only
    link options, so every generator works (Unix Makefiles too). Needs Clang
    and lld 21 or newer.

  Its C and C++ compiles run through ``mtpc-compile`` (their
  ``<LANG>_COMPILER_LAUNCHER``; see ``MTPC_SPLIT_COMPILE``): a compile whose
  IR is costly runs LLVM's pre-link pipeline in parallel partitions and
  writes the same kind of ThinLTO object; every other compile runs exactly
  as given. A target whose compiler launcher is ``ccache`` (or the list
  ``ccache;mtpc-compile``) keeps ccache in front, with ``mtpc-compile`` behind
  it as ccache's ``CCACHE_PREFIX``: a cache hit runs nothing of MTPC. A target
  with another compiler launcher of its own keeps it, with one ``STATUS``
  line, and its compiles are not split.

  For a static or
  object library only the ``-flto=thin`` compile flag is added (and the
  compiler launcher), so that an
  enabled target linking it gets its objects as ThinLTO modules: enable the
  libraries that hold large sources too (``mtpc-link``'s summary line counts
  the native objects a link passes through unsplit).

  The objects of an enabled static or object library are ThinLTO bitcode,
  which the default linker (GNU ld) cannot read. So at the end of the
  configuration (``cmake_language(DEFER)`` in the top directory, CMake >=
  3.19) every executable, shared or module library of the project that is not
  enabled but links such objects (``$<TARGET_OBJECTS:lib>`` in its sources;
  the library in its ``LINK_LIBRARIES``, or in the link interface of a library
  it links, ``$<LINK_ONLY:lib>`` included; other generator expressions are not
  evaluated) gets ``-flto=thin -fuse-ld=lld`` link options: a plain ThinLTO
  link by lld, not MTPC's. One ``STATUS`` line per such target names the
  libraries::

    MTPC: app links the ThinLTO objects of mylib (enabled): linked with -flto=thin -fuse-ld=lld

  Such a target built by another compiler than Clang cannot link them: one
  warning names it. With CMake before 3.19 one warning says that the targets
  linking an enabled library must be enabled too.

  ``PARTITIONS``, ``COST`` and ``THRESHOLD`` override ``MTPC_MAX_PARTITIONS``,
  ``MTPC_SPLIT_COST`` and ``MTPC_SPLIT_THRESHOLD`` for this target (absent:
  the cache variable).

  Requires Clang and lld, and a Ninja generator or Clang >= 21 (see
  ``MTPC_MODE``). When one is missing, one warning is printed for the whole
  project and the
  target builds exactly as it would without ``mtpc_enable()``. The compiler
  is checked per target, for the languages it uses (its sources, or every
  enabled C/C++ language when they are not known yet): a C target with Clang
  is enabled even if the C++ compiler is GCC; a target with sources of a
  non-Clang compiler gets one warning naming it and builds as usual.
  Targets that are not enabled are never touched (no global flags), except
  for the link options of those that link an enabled library's objects
  (above).

.. command:: mtpc_enable_all

  ::

    mtpc_enable_all([DIRECTORY <dir>] [EXCLUDE <target>...])

  Calls ``mtpc_enable()`` for every executable and library target (static,
  shared, module or object) that compiles C or C++ (by its sources'
  languages; a target of Fortran or assembly only is skipped) and is
  declared in ``<dir>`` (default: the current source directory) or,
  recursively, one of its subdirectories, except the ``EXCLUDE`` targets and
  those enabled already. Imported, alias, interface and custom targets are
  skipped. Call it after
  the targets are declared: at the end of a ``CMakeLists.txt``, or deferred,
  as ``mtpc-project-include.cmake`` (next to this module) does::

    cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}"
      CALL mtpc_enable_all DIRECTORY "${CMAKE_SOURCE_DIR}")

  That file, given as ``-DCMAKE_PROJECT_INCLUDE=`` (which CMake includes after
  every ``project()`` call), builds a project whose ``CMakeLists.txt`` never
  mentions MTPC through it. Prints one ``STATUS`` line naming the targets it
  enabled (none when MTPC cannot be used: ``mtpc_enable()`` says why)::

    MTPC: enabled 3 targets under /src/proj: core, app, calc

Cache variables
^^^^^^^^^^^^^^^

``MTPC_MODE``
  How links reach MTPC: ``auto`` (the default), ``launcher`` or ``dtlto``
  (see ``mtpc_enable``). ``auto`` takes ``launcher`` with a Ninja generator
  and ``dtlto`` with any other when Clang is 21 or newer. The launcher stays
  the default where it works because lld 22's DTLTO writes no ``.dwo``
  files for ``-gsplit-dwarf`` (``mtpc-link`` packs them into a ``.dwp``) and
  names archive members anew at every link (``mtpc-distribute`` then
  re-splits them each time; ``mtpc-link`` extracts them under stable
  names).
``MTPC_SPLIT_COST``
  Which modules are split, by estimated backend cost: those whose ThinLTO
  summary counts at least this many instructions (empty, the default:
  ``mtpc-link``'s default, 100000, about 6 s of backend). Once the plan cache
  has measured the link's modules, a module whose measured backend time
  disagrees with its estimate is judged by the measurement. At the link, such
  a module is split only when that shortens the predicted time of the link's
  backends (not when the other backends keep the cores busy anyway). Each
  link's summary line says why each large module was or was not split.
``MTPC_RELAY_COST``
  Modules not split but estimated to cost at least this many instructions
  may be relayed (see ``MTPC_RELAY``): compiled as one partition behind the
  split's import step (empty, the default: 1/8 of the split threshold,
  12500). A module's ThinLTO shard changes whenever any module it imports
  from changes, and the plain backend then recompiles it; relayed, it is
  recompiled only when the code it imports (or its own) changed. A value
  above ``MTPC_SPLIT_COST`` turns relaying off; so does
  ``MTPC_SPLIT_THRESHOLD`` (choosing by size).
``MTPC_RELAY``
  Which of those modules are relayed: ``auto`` (the default) only a module
  whose recent rebuilds the plan cache saw forced by other modules' changes
  (at least two, and half of its last rebuilds): a relay costs an import
  step on every rebuild and saves nothing on a full build; ``always`` every
  module costing at least ``MTPC_RELAY_COST``; ``never``. With ``auto`` and
  ``always``, a module not split for speed, costing at least a quarter of
  ``MTPC_SPLIT_COST``, whose own edits caused two of its last rebuilds (and
  half of them) is split for its edits: an edit then recompiles the
  partitions whose code changed. ``never`` does neither.
``MTPC_BUSY``
  ``auto`` (the default): a split, at the link or at the compile, must also
  pay beside the work that other MTPC links and compiles running on the
  machine announced (their predicted remaining time): a module whose split
  would only share cores they keep busy is built whole, and the summary line
  says so. The objects then depend on what else ran (each is correct).
  ``ignore``: decide by each link's or compile's own inputs alone, for
  reproducible objects.
``MTPC_LTO``
  ``ON`` (the default): ``mtpc_enable()`` builds its targets with ThinLTO,
  both halves split (compile and link). ``OFF``: as if every
  ``mtpc_enable()`` said ``NO_LTO``: the targets keep their plain compiles and
  links, and their costly compiles are split (see ``mtpc_enable``).
``MTPC_SPLIT_COMPILE``
  ``ON`` (the default): the compiles of enabled targets run through
  ``mtpc-compile``, which splits those whose estimated cost is at least
  ``MTPC_SPLIT_COST`` (the previous output's ThinLTO summary, else the
  source's size) into ``MTPC_MAX_PARTITIONS`` partitions for LLVM's pre-link
  pipeline, within the same job budget as the links. Compiles that
  instrument in LLVM's pipeline, use profiles, CFI or a split LTO unit are
  never split (``mtpc-compile --help``). ``OFF``: compiles are left alone.
``MTPC_SPLIT_THRESHOLD``
  Choose by size instead: bitcode bytes above which a module is split (0
  splits every module). Empty (the default): by cost.
``MTPC_MERGE_DWO``
  ``OFF`` (the default): a plain (not ThinLTO) compile with
  ``-gsplit-dwarf`` is never split. ``ON``: it is split too, and the
  partitions' split units are merged into the one ``.dwo`` the compile
  writes, one unit per partition, which ``llvm-dwarfdump --verify`` accepts
  and gdb reads. ``llvm-dwp -e`` of a program with such an object stops at
  a duplicate DWO id (it reads the ``.dwo`` once per unit): give
  ``llvm-dwp`` the ``.dwo`` files themselves.
``MTPC_TYPE_UNITS``
  ``ON`` (the default): partitions are compiled with
  ``-fdebug-types-section``, so that the C++ types of a ``-g`` build become
  DWARF type units, which the final link keeps once however many partitions
  use them (``llvm-dwp`` likewise for ``-gsplit-dwarf``); not for a link
  with ``-Wl,--gdb-index``, whose index does not cover type units. ``OFF``: each
  partition's compile unit carries the types its code uses, and a split
  module's debug info grows with its partition count (see
  docs/build-integration.md, "Debug info").
``MTPC_MAX_PARTITIONS``
  Maximum partitions (Ninja slots) per split module (default empty: the
  number of logical cores, or 16 with ``MTPC_EXECUTOR=slurm``; 1 disables
  splitting).
``MTPC_JOBS``
  Parallelism of each link's inner build (default 0: number of cores). With
  ``MTPC_EXECUTOR=slurm``: the CPUs each link asks Slurm for (0: 16, or
  fewer if fewer are idle); the inner build then runs as many compiles as
  the allocation has CPUs.
``MTPC_EXECUTOR``
  Where backends and partitions compile: ``local`` (the default) or
  ``slurm``: each link takes one Slurm allocation and runs every backend and
  partition compile as a job step of it (``srun``), with retries on node
  failures and a local build when no allocation comes. The build tree, MTPC
  and the compiler must be at the same paths on every node (a shared
  filesystem). See docs/distributed.md.
``MTPC_SLURM_ARGS``
  More ``salloc`` options for ``MTPC_EXECUTOR=slurm`` (a ;-list, e.g.
  ``--partition=build;--time=30``; ``-N``/``-n`` size the allocation).
``MTPC_CACHE``
  Path of the SQLite plan cache (default empty: ``$MTPC_CACHE`` from the
  environment, else ``$XDG_CACHE_HOME/mtpc/plans.sqlite``, else
  ``~/.cache/mtpc/plans.sqlite``: the path ``mtpc-cache path`` prints). The
  cache is always used; an unusable one gives one warning per link.
``MTPC_LAUNCHER``
  Command prefix (a ;-list) for backend and partition compiles, e.g. for
  remote execution (default empty).
``MTPC_SPLIT_ARGS``
  More ``mtpc-split`` options (a ;-list, e.g. ``--copy-budget;0.05``; see
  ``mtpc-split --help``), default empty. A wrong option makes every split
  fall back to the plain backend with a warning; the build still succeeds.

A change of a variable reruns only the compiles it concerns: the options of
``mtpc-compile`` live in files (``CMakeFiles/mtpc-compile*.rsp``, written only
when their text changes), not on the compile rule's command line, and the
compiles costly enough to split name the file of the options that decide
their split in their depfile (see docs/build-integration.md). Only
``MTPC_SPLIT_COMPILE`` recompiles every source of the enabled targets.

Variables that locate the tools (normally found automatically, relative to
this file: ``<prefix>/bin`` in an installed tree):
``MTPC_LINK_EXECUTABLE``, ``MTPC_DISTRIBUTE_EXECUTABLE``,
``MTPC_COMPILE_EXECUTABLE``, ``MTPC_SPLIT_EXECUTABLE``, ``MTPC_CACHE_EXECUTABLE``, ``MTPC_NINJA_EXECUTABLE``
(``dtlto`` mode's inner builds), ``MTPC_LLD_EXECUTABLE`` (``ld.lld`` next to
the compiler by default). The MTPC tools are link dependencies
of the enabled targets (``LINK_DEPENDS``): a new MTPC relinks them, and the
inner build reruns the splits but recompiles only partitions that changed.
#]=======================================================================]

include_guard(GLOBAL)
# The policies this module is written for, whatever the including project's
# cmake_minimum_required says (IN_LIST needs CMP0057, the $<TARGET_OBJECTS:>
# entries of SOURCES CMP0051, ...). The functions defined below record them and
# use them when they are called; the project's own settings are restored at the
# end of this file.
cmake_policy(PUSH)
cmake_policy(VERSION 3.14...3.25)

set(_MTPC_MODULE_DIR "${CMAKE_CURRENT_LIST_DIR}")
# The LLVM major version MTPC was built with (MTPC_LLVM_VERSION): set by the build tree's
# package config, or by this file of an installed MTPC; else asked from mtpc-split.
include("${_MTPC_MODULE_DIR}/MTPCLLVMVersion.cmake" OPTIONAL)

set(MTPC_SPLIT_COST "" CACHE STRING
  "MTPC: split modules whose estimated backend cost is at least this many instructions (empty: 100000)")
set(MTPC_RELAY_COST "" CACHE STRING
  "MTPC: relay modules not split that cost at least this many instructions (empty: 1/8 of the split cost)")
set(MTPC_RELAY "auto" CACHE STRING
  "MTPC: relay modules not split: auto (when other modules' changes keep forcing their rebuild), always, never (also no split for a module's edits)")
set_property(CACHE MTPC_RELAY PROPERTY STRINGS auto always never)
set(MTPC_BUSY "auto" CACHE STRING
  "MTPC: auto: split only where other MTPC links and compiles on the machine leave cores to gain; ignore: decide by each link's or compile's inputs alone")
set_property(CACHE MTPC_BUSY PROPERTY STRINGS auto ignore)
option(MTPC_SPLIT_COMPILE "MTPC: split costly compiles into parallel partitions too (mtpc-compile)" ON)
option(MTPC_LTO "MTPC: mtpc_enable() builds its targets with ThinLTO, both halves split; OFF: the targets' own (plain) compiles are split, links untouched" ON)
set(MTPC_SPLIT_THRESHOLD "" CACHE STRING
  "MTPC: choose by size instead: bitcode bytes above which a module is split (0: every module; empty: by cost)")
option(MTPC_TYPE_UNITS "MTPC: compile partitions with DWARF type units (-fdebug-types-section)" ON)
option(MTPC_MERGE_DWO "MTPC: split plain -gsplit-dwarf compiles too, their partitions' units merged into the one .dwo (gdb reads it; llvm-dwp -e does not)" OFF)
set(MTPC_MAX_PARTITIONS "" CACHE STRING
  "MTPC: maximum partitions per split module (empty: number of cores, 16 with MTPC_EXECUTOR=slurm)")
set(MTPC_JOBS 0 CACHE STRING "MTPC: parallelism of the inner build of a link (0: number of cores)")
set(MTPC_CACHE "" CACHE FILEPATH "MTPC: plan cache database (empty: $MTPC_CACHE or ~/.cache/mtpc)")
set(MTPC_LAUNCHER "" CACHE STRING "MTPC: command prefix for backend and partition compiles")
set(MTPC_SPLIT_ARGS "" CACHE STRING "MTPC: more mtpc-split options (;-list)")
set(MTPC_EXECUTOR "local" CACHE STRING
  "MTPC: where backends and partitions compile: local or slurm (one allocation per link)")
set_property(CACHE MTPC_EXECUTOR PROPERTY STRINGS local slurm)
set(MTPC_SLURM_ARGS "" CACHE STRING "MTPC: more salloc options (;-list) for MTPC_EXECUTOR=slurm")
set(MTPC_MODE "auto" CACHE STRING
  "MTPC: auto, launcher (mtpc-link; Ninja generators) or dtlto (mtpc-distribute; Clang >= 21)")
set_property(CACHE MTPC_MODE PROPERTY STRINGS auto launcher dtlto)

# Where the tools are: the build-tree package config sets the variables
# before including this file; otherwise next to this file in an installed
# tree (<prefix>/share/mtpc/cmake -> <prefix>/bin), or a build directory
# named "build" in a source checkout, or PATH.
function(_mtpc_find_tool var name subdir)
  if(${var})
    return()
  endif()
  find_program(${var} NAMES ${name}
    HINTS "${_MTPC_MODULE_DIR}/../../../bin" "${_MTPC_MODULE_DIR}/../build/${subdir}"
    DOC "MTPC: path of ${name}")
endfunction()
_mtpc_find_tool(MTPC_LINK_EXECUTABLE mtpc-link ninja-gen)
_mtpc_find_tool(MTPC_DISTRIBUTE_EXECUTABLE mtpc-distribute ninja-gen)
_mtpc_find_tool(MTPC_SPLIT_EXECUTABLE mtpc-split splitter)
_mtpc_find_tool(MTPC_CACHE_EXECUTABLE mtpc-cache cache)
_mtpc_find_tool(MTPC_COMPILE_EXECUTABLE mtpc-compile ninja-gen)

# The LLVM major version of MTPC's tools (MTPC_LLVM_VERSION, else mtpc-split --version),
# or "" when unknown.
function(_mtpc_tools_llvm_version out)
  set(v "${MTPC_LLVM_VERSION}")
  if(NOT v AND MTPC_SPLIT_EXECUTABLE AND EXISTS "${MTPC_SPLIT_EXECUTABLE}")
    execute_process(COMMAND "${MTPC_SPLIT_EXECUTABLE}" --version RESULT_VARIABLE rc
      OUTPUT_VARIABLE text ERROR_QUIET TIMEOUT 30)
    if(rc EQUAL 0 AND text MATCHES "\\(LLVM ([0-9]+)\\)")
      set(v "${CMAKE_MATCH_1}")
    endif()
  endif()
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

# The mode MTPC_MODE asks for, given the generator and Clang's major version
# (out), or "" with the reason in why_out.
function(_mtpc_mode cmajor out why_out)
  set(ninja_gen 0)
  if(CMAKE_GENERATOR MATCHES "^Ninja")
    set(ninja_gen 1)
  endif()
  set(mode "")
  set(why "")
  if(MTPC_MODE STREQUAL "launcher" OR (MTPC_MODE STREQUAL "auto" AND ninja_gen))
    if(ninja_gen)
      set(mode launcher)
    else()
      set(why "MTPC_MODE=launcher needs the Ninja generator (this build uses \"${CMAKE_GENERATOR}\")")
    endif()
  elseif(MTPC_MODE MATCHES "^(auto|dtlto)$")
    if(cmajor LESS 21)
      if(MTPC_MODE STREQUAL "dtlto")
        set(why "MTPC_MODE=dtlto needs Clang >= 21 (lld's Distributed ThinLTO); this is Clang ${cmajor}")
      else()
        set(why "MTPC needs the Ninja generator, or Clang >= 21 for its DTLTO mode (this build uses \"${CMAKE_GENERATOR}\" with Clang ${cmajor})")
      endif()
    else()
      set(mode dtlto)
    endif()
  else()
    message(FATAL_ERROR "MTPC_MODE is \"${MTPC_MODE}\"; expected auto, launcher or dtlto")
  endif()
  set(${out} "${mode}" PARENT_SCOPE)
  set(${why_out} "${why}" PARENT_SCOPE)
endfunction()

# The reason MTPC cannot be used in this project at all, or "" (computed
# once); the reason its ThinLTO mode cannot (lto_out: a generator or Clang
# its links cannot work with, a missing link tool), or ""; and the mode links
# use (mode_out). A target enabled without LTO (MTPC_LTO) needs only the
# first to be "".
function(_mtpc_check out lto_out mode_out)
  set(why "")
  set(lto_why "")
  set(mode "")
  # Clang for at least one of C and C++ (each target's own languages are
  # checked by mtpc_enable: a C target does not care about the C++ compiler).
  get_property(langs GLOBAL PROPERTY ENABLED_LANGUAGES)
  set(compiler "")
  set(cmajor "")
  set(others "")
  foreach(lang IN ITEMS C CXX)
    if(lang IN_LIST langs)
      if(CMAKE_${lang}_COMPILER_ID STREQUAL "Clang")
        if(NOT compiler)
          set(compiler "${CMAKE_${lang}_COMPILER}")
          string(REGEX MATCH "^[0-9]+" cmajor "${CMAKE_${lang}_COMPILER_VERSION}")
        endif()
      else()
        string(APPEND others " the ${lang} compiler is ${CMAKE_${lang}_COMPILER_ID} ${CMAKE_${lang}_COMPILER}")
      endif()
    endif()
  endforeach()
  if(NOT compiler)
    if(others)
      set(why "MTPC needs Clang (${others})")
    else()
      set(why "MTPC needs a C or C++ project")
    endif()
  endif()
  if(NOT why)
    _mtpc_mode("${cmajor}" mode lto_why)
  endif()
  if(NOT why)
    get_filename_component(real "${compiler}" REALPATH)
    get_filename_component(bindir "${real}" DIRECTORY)
    set(_MTPC_LLVM_BIN "${bindir}" CACHE INTERNAL "")
    find_program(MTPC_LLD_EXECUTABLE NAMES ld.lld ld.lld-${cmajor} HINTS "${bindir}"
      DOC "MTPC: ld.lld used by -fuse-ld=lld and the partition merge")
    if(NOT MTPC_LLD_EXECUTABLE OR NOT EXISTS "${MTPC_LLD_EXECUTABLE}")
      set(why "MTPC needs lld (ld.lld not found next to ${real}; set MTPC_LLD_EXECUTABLE)")
    endif()
  endif()
  # mtpc-split reads the project's bitcode with its own LLVM, and the project's clang
  # compiles the partitions it writes: a newer clang writes bitcode that LLVM cannot read,
  # an older one cannot read the partitions. The majors must match.
  _mtpc_tools_llvm_version(tools)
  foreach(lang IN ITEMS C CXX)
    if(NOT why AND tools AND lang IN_LIST langs AND CMAKE_${lang}_COMPILER_ID STREQUAL "Clang")
      string(REGEX MATCH "^[0-9]+" major "${CMAKE_${lang}_COMPILER_VERSION}")
      if(major AND NOT major EQUAL tools)
        if(major GREATER tools)
          set(problem "LLVM ${tools} cannot read the bitcode of")
        else()
          set(problem "its partitions cannot be compiled by")
        endif()
        string(CONCAT why "MTPC is built with LLVM ${tools}: ${problem} this project's "
          "Clang ${major} (${CMAKE_${lang}_COMPILER}); use clang-${tools}, or an MTPC built "
          "with -DMTPC_LLVM_VERSION=${major}")
      endif()
    endif()
  endforeach()
  if(NOT lto_why AND mode STREQUAL "launcher"
     AND (NOT MTPC_LINK_EXECUTABLE OR NOT EXISTS "${MTPC_LINK_EXECUTABLE}"))
    set(lto_why "mtpc-link not found (set MTPC_LINK_EXECUTABLE)")
  endif()
  if(NOT lto_why AND mode STREQUAL "dtlto")
    if(NOT MTPC_DISTRIBUTE_EXECUTABLE OR NOT EXISTS "${MTPC_DISTRIBUTE_EXECUTABLE}")
      set(lto_why "mtpc-distribute not found (set MTPC_DISTRIBUTE_EXECUTABLE)")
    endif()
    # The inner build of a DTLTO link is a Ninja build, whatever the generator.
    if(CMAKE_GENERATOR MATCHES "^Ninja" AND CMAKE_MAKE_PROGRAM)
      set(MTPC_NINJA_EXECUTABLE "${CMAKE_MAKE_PROGRAM}" CACHE FILEPATH "MTPC: ninja for inner builds")
    else()
      find_program(MTPC_NINJA_EXECUTABLE NAMES ninja ninja-build DOC "MTPC: ninja for inner builds")
    endif()
    if(NOT lto_why AND NOT MTPC_NINJA_EXECUTABLE)
      set(lto_why "MTPC's DTLTO mode needs ninja for its inner builds (set MTPC_NINJA_EXECUTABLE)")
    endif()
  endif()
  set(${out} "${why}" PARENT_SCOPE)
  set(${lto_out} "${lto_why}" PARENT_SCOPE)
  set(${mode_out} "${mode}" PARENT_SCOPE)
endfunction()

# The languages among C and CXX that target compiles (by its sources' LANGUAGE
# or extension) or links with; every enabled one of the two when its sources
# are not known yet (added later, or generator expressions only).
function(_mtpc_target_languages target out)
  get_property(enabled GLOBAL PROPERTY ENABLED_LANGUAGES)
  get_target_property(sources ${target} SOURCES)
  set(langs "")
  set(known 0)
  foreach(src IN LISTS sources)
    if(src MATCHES "^\\$<")
      continue()
    endif()
    set(known 1)
    get_source_file_property(lang "${src}" LANGUAGE)
    if(NOT lang)
      get_filename_component(ext "${src}" LAST_EXT)
      string(REGEX REPLACE "^\\." "" ext "${ext}")
      foreach(l IN ITEMS C CXX)
        if(l IN_LIST enabled AND ext IN_LIST CMAKE_${l}_SOURCE_FILE_EXTENSIONS)
          set(lang ${l})
        endif()
      endforeach()
    endif()
    if(lang MATCHES "^(C|CXX)$")
      list(APPEND langs ${lang})
    endif()
  endforeach()
  get_target_property(link ${target} LINKER_LANGUAGE)
  if(link MATCHES "^(C|CXX)$")
    list(APPEND langs ${link})
  endif()
  if(NOT known)
    foreach(l IN ITEMS C CXX)
      if(l IN_LIST enabled)
        list(APPEND langs ${l})
      endif()
    endforeach()
  endif()
  list(REMOVE_DUPLICATES langs)
  set(${out} "${langs}" PARENT_SCOPE)
endfunction()

# The options every front end takes (mtpc-link, mtpc-distribute, mtpc-compile),
# as "--name=value" words, for target (PARTITIONS, COST of mtpc_enable in
# the caller's _MTPC_* variables).
function(_mtpc_common_opts out)
  set(parts "${MTPC_MAX_PARTITIONS}")
  if(_MTPC_PARTITIONS)
    set(parts ${_MTPC_PARTITIONS})
  endif()
  set(cost "${MTPC_SPLIT_COST}")
  if(DEFINED _MTPC_COST AND NOT _MTPC_COST STREQUAL "")
    set(cost ${_MTPC_COST})
  endif()
  set(opts --jobs=${MTPC_JOBS})
  if(NOT "${parts}" STREQUAL "")
    list(APPEND opts --partitions=${parts})
  endif()
  if(MTPC_EXECUTOR STREQUAL "slurm")
    list(APPEND opts --executor=slurm)
    foreach(word IN LISTS MTPC_SLURM_ARGS)
      list(APPEND opts "--slurm-arg=${word}")
    endforeach()
  elseif(NOT MTPC_EXECUTOR STREQUAL "local")
    message(FATAL_ERROR "MTPC_EXECUTOR is \"${MTPC_EXECUTOR}\"; expected local or slurm")
  endif()
  if(NOT cost STREQUAL "")
    list(APPEND opts --cost-threshold=${cost})
  endif()
  if(NOT MTPC_BUSY MATCHES "^(auto|ignore)$")
    message(FATAL_ERROR "MTPC_BUSY is \"${MTPC_BUSY}\"; expected auto or ignore")
  elseif(NOT MTPC_BUSY STREQUAL "auto")
    list(APPEND opts --busy=${MTPC_BUSY})
  endif()
  if(MTPC_SPLIT_EXECUTABLE)
    list(APPEND opts "--split-tool=${MTPC_SPLIT_EXECUTABLE}")
  endif()
  if(MTPC_CACHE)
    list(APPEND opts "--cache=${MTPC_CACHE}")
  endif()
  foreach(word IN LISTS MTPC_LAUNCHER)
    list(APPEND opts "--launcher=${word}")
  endforeach()
  set(${out} "${opts}" PARENT_SCOPE)
endfunction()

# Write text to file unless it holds it already: an unchanged file keeps its
# mtime, and the compiles that depend on it do not rerun.
function(_mtpc_write_if_changed file text)
  set(old "")
  if(EXISTS "${file}")
    file(READ "${file}" old)
  endif()
  if(NOT old STREQUAL text)
    file(WRITE "${file}" "${text}")
  endif()
endfunction()

# The words of list as the text of an mtpc-compile options file (@FILE): one
# double-quoted word a line.
function(_mtpc_rsp_text out words)
  set(text "")
  foreach(word IN LISTS words)
    string(REPLACE "\\" "\\\\" q "${word}")
    string(REPLACE "\"" "\\\"" q "${q}")
    string(APPEND text "\"${q}\"\n")
  endforeach()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# A compiler launcher that runs ccache first and mtpc-compile behind it, from
# a target's own launcher own (a list starting with ccache; an mtpc-compile
# in it, as in "ccache;mtpc-compile", is dropped): ccache's CCACHE_PREFIX
# runs mtpc-compile on a miss only, which takes its options (opts) from
# MTPC_COMPILE_OPTIONS. A hit runs nothing of MTPC, and ccache hashes what it
# hashes without MTPC: the same hit rate. "" in out when own is not ccache's,
# or a word cannot go through those space-separated variables.
function(_mtpc_behind_ccache own opts out)
  set(${out} "" PARENT_SCOPE)
  list(GET own 0 first)
  get_filename_component(name "${first}" NAME)
  if(NOT name MATCHES "^ccache(\\.exe)?$")
    return()
  endif()
  set(rest "")
  foreach(word IN LISTS own)
    get_filename_component(n "${word}" NAME)
    if(NOT n STREQUAL "mtpc-compile")
      list(APPEND rest "${word}")
    endif()
  endforeach()
  foreach(word IN LISTS opts ITEMS "${MTPC_COMPILE_EXECUTABLE}")
    if(word MATCHES "[ \t\n]")
      message(STATUS "MTPC: \"${word}\" has a blank, which ccache's CCACHE_PREFIX cannot pass")
      return()
    endif()
  endforeach()
  find_program(MTPC_ENV_EXECUTABLE env DOC "MTPC: env, to run ccache with mtpc-compile behind it")
  if(NOT MTPC_ENV_EXECUTABLE)
    return()
  endif()
  string(REPLACE ";" " " words "${opts}")
  set(${out} "${MTPC_ENV_EXECUTABLE}" "CCACHE_PREFIX=${MTPC_COMPILE_EXECUTABLE}"
    "MTPC_COMPILE_OPTIONS=${words}" ${rest} PARENT_SCOPE)
endfunction()

# mtpc-compile as the compiler launcher of target's C and C++ compiles
# (MTPC_SPLIT_COMPILE): a compile whose IR is costly runs in parallel
# partitions. A target whose launcher is ccache keeps it in front
# (_mtpc_behind_ccache); one with another launcher of its own keeps it, with
# one status line.
#
# Every MTPC option lives in an options file (@FILE), not on the compile
# rule's command line, whose change would recompile every source of the
# target: CMakeFiles/mtpc-compile.rsp holds those that change no object
# (jobs, cache, executor, launcher, ninja); CMakeFiles/mtpc-compile-split.rsp
# (mtpc-compile-split-<target>.rsp for a target with its own PARTITIONS or
# COST) those that decide whether a compile is split and into how many
# partitions. mtpc-compile adds the latter to the depfile of each compile it
# concerns (costly enough to split), so that changing MTPC_MAX_PARTITIONS or
# MTPC_SPLIT_COST reruns those compiles and no other. Both files are written
# only when their text changes.
function(_mtpc_compile_launcher target langs)
  if(NOT MTPC_SPLIT_COMPILE OR NOT MTPC_COMPILE_EXECUTABLE OR NOT EXISTS "${MTPC_COMPILE_EXECUTABLE}")
    return()
  endif()
  _mtpc_common_opts(all)
  if(MTPC_MERGE_DWO)
    list(APPEND all "--merge-dwo")
  endif()
  if(MTPC_NINJA_EXECUTABLE)
    list(APPEND all "--ninja=${MTPC_NINJA_EXECUTABLE}")
  elseif(CMAKE_GENERATOR MATCHES "^Ninja" AND CMAKE_MAKE_PROGRAM)
    list(APPEND all "--ninja=${CMAKE_MAKE_PROGRAM}")
  endif()
  # --partitions always, 0 when unset (the cores): the split file must set
  # an option that decides the split from the start, or setting
  # MTPC_MAX_PARTITIONS later would find no compile depending on it.
  set(split "")
  set(other "")
  foreach(word IN LISTS all)
    if(word MATCHES "^--(partitions|cost-threshold|busy|split-tool|split-arg)=" OR word STREQUAL "--merge-dwo")
      list(APPEND split "${word}")
    else()
      list(APPEND other "${word}")
    endif()
  endforeach()
  if(NOT split MATCHES "(^|;)--partitions=")
    list(INSERT split 0 "--partitions=0")
  endif()
  set(split_file "${CMAKE_BINARY_DIR}/CMakeFiles/mtpc-compile-split.rsp")
  if(_MTPC_PARTITIONS OR (DEFINED _MTPC_COST AND NOT _MTPC_COST STREQUAL ""))
    set(split_file "${CMAKE_BINARY_DIR}/CMakeFiles/mtpc-compile-split-${target}.rsp")
  endif()
  set(other_file "${CMAKE_BINARY_DIR}/CMakeFiles/mtpc-compile.rsp")
  _mtpc_rsp_text(text "${split}")
  _mtpc_write_if_changed("${split_file}" "${text}")
  _mtpc_rsp_text(text "${other}")
  _mtpc_write_if_changed("${other_file}" "${text}")
  foreach(lang IN ITEMS C CXX)
    if(NOT lang IN_LIST langs)
      continue()
    endif()
    get_target_property(own ${target} ${lang}_COMPILER_LAUNCHER)
    if(NOT own)
      set_property(TARGET ${target} PROPERTY ${lang}_COMPILER_LAUNCHER "${MTPC_COMPILE_EXECUTABLE}"
        "@${split_file}" "@${other_file}" --)
      continue()
    endif()
    _mtpc_behind_ccache("${own}" "@${split_file};@${other_file}" launcher)
    if(launcher)
      set_property(TARGET ${target} PROPERTY ${lang}_COMPILER_LAUNCHER "${launcher}")
    else()
      message(STATUS "MTPC: ${target} keeps its ${lang} compiler launcher (${own}); its compiles are not split")
    endif()
  endforeach()
endfunction()

function(mtpc_enable target)
  cmake_parse_arguments(PARSE_ARGV 1 _MTPC "LTO;NO_LTO" "PARTITIONS;COST;THRESHOLD" "")
  if(_MTPC_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "mtpc_enable(${target}): unknown arguments: ${_MTPC_UNPARSED_ARGUMENTS}")
  endif()
  if(_MTPC_LTO AND _MTPC_NO_LTO)
    message(FATAL_ERROR "mtpc_enable(${target}): LTO and NO_LTO given together")
  endif()
  set(lto ${MTPC_LTO})
  if(_MTPC_LTO)
    set(lto ON)
  elseif(_MTPC_NO_LTO)
    set(lto OFF)
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "mtpc_enable(${target}): no such target")
  endif()
  get_target_property(type ${target} TYPE)
  if(NOT type MATCHES "^(EXECUTABLE|SHARED_LIBRARY|MODULE_LIBRARY|STATIC_LIBRARY|OBJECT_LIBRARY)$")
    message(FATAL_ERROR "mtpc_enable(${target}): ${type} targets cannot be enabled")
  endif()

  get_property(checked GLOBAL PROPERTY _MTPC_CHECKED)
  if(NOT checked)
    _mtpc_check(why lto_why mode)
    set_property(GLOBAL PROPERTY _MTPC_CHECKED 1)
    set_property(GLOBAL PROPERTY _MTPC_LINK_MODE "${mode}")
    set_property(GLOBAL PROPERTY _MTPC_UNUSABLE "${why}")
    set_property(GLOBAL PROPERTY _MTPC_LTO_UNUSABLE "${lto_why}")
    if(why)
      # One message for the whole project; the targets build as before.
      message(WARNING "${why}: mtpc_enable() does nothing in this build, targets build as usual.")
    endif()
  endif()
  get_property(why GLOBAL PROPERTY _MTPC_UNUSABLE)
  if(why)
    return()
  endif()
  get_property(lto_why GLOBAL PROPERTY _MTPC_LTO_UNUSABLE)
  if(lto AND lto_why)
    get_property(warned GLOBAL PROPERTY _MTPC_LTO_WARNED)
    if(NOT warned)
      set_property(GLOBAL PROPERTY _MTPC_LTO_WARNED 1)
      message(WARNING "${lto_why}: mtpc_enable() does nothing in this build, targets build as "
        "usual (MTPC_LTO=OFF or NO_LTO would still split their costly compiles).")
    endif()
    return()
  endif()
  _mtpc_target_languages(${target} langs)
  foreach(lang IN LISTS langs)
    if(NOT CMAKE_${lang}_COMPILER_ID STREQUAL "Clang")
      message(WARNING "mtpc_enable(${target}): its ${lang} sources are compiled by "
        "${CMAKE_${lang}_COMPILER_ID} ${CMAKE_${lang}_COMPILER}; MTPC needs Clang, so "
        "${target} builds as usual.")
      return()
    endif()
  endforeach()

  # Enabled: mtpc_enable_all tells by this; with ThinLTO (its objects are
  # bitcode, its link MTPC's) _mtpc_link_consumers by _MTPC_BITCODE. A
  # target without LTO keeps its own compiles' kind and its own link.
  set_property(TARGET ${target} PROPERTY _MTPC_ENABLED 1)
  if(NOT lto)
    _mtpc_compile_launcher(${target} "${langs}")
    return()
  endif()
  set_property(TARGET ${target} PROPERTY _MTPC_BITCODE 1)
  # Per language and only for Clang: a source added later for another
  # compiler must not get a flag it cannot parse.
  target_compile_options(${target} PRIVATE
    $<$<AND:$<COMPILE_LANGUAGE:C>,$<C_COMPILER_ID:Clang>>:-flto=thin>
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:Clang>>:-flto=thin>)
  _mtpc_compile_launcher(${target} "${langs}")
  if(type MATCHES "^(STATIC|OBJECT)_LIBRARY$")
    # Its objects are ThinLTO bitcode now, which a target linking them
    # without being enabled cannot link with the default linker.
    _mtpc_watch_consumers()
    return()
  endif()
  target_link_options(${target} PRIVATE -flto=thin -fuse-ld=lld)

  set(threshold "${MTPC_SPLIT_THRESHOLD}")
  if(DEFINED _MTPC_THRESHOLD AND NOT _MTPC_THRESHOLD STREQUAL "")
    set(threshold ${_MTPC_THRESHOLD})
  endif()
  # The options mtpc-link and mtpc-distribute share, as "--name=value" words.
  _mtpc_common_opts(opts)
  list(APPEND opts "--llvm-bin=${_MTPC_LLVM_BIN}")
  if(NOT threshold STREQUAL "")
    list(APPEND opts --threshold=${threshold})
  endif()
  if(NOT MTPC_RELAY_COST STREQUAL "")
    list(APPEND opts --relay-cost=${MTPC_RELAY_COST})
  endif()
  if(NOT MTPC_RELAY MATCHES "^(auto|always|never)$")
    message(FATAL_ERROR "MTPC_RELAY is \"${MTPC_RELAY}\"; expected auto, always or never")
  elseif(NOT MTPC_RELAY STREQUAL "auto")
    list(APPEND opts --relay=${MTPC_RELAY})
  endif()
  if(NOT MTPC_TYPE_UNITS)
    list(APPEND opts --no-type-units)
  endif()
  foreach(word IN LISTS MTPC_SPLIT_ARGS)
    list(APPEND opts "--split-arg=${word}")
  endforeach()
  get_property(mode GLOBAL PROPERTY _MTPC_LINK_MODE)
  if(mode STREQUAL "dtlto")
    set(tools "${MTPC_DISTRIBUTE_EXECUTABLE}" "${MTPC_SPLIT_EXECUTABLE}")
  else()
    set(tools "${MTPC_LINK_EXECUTABLE}" "${MTPC_SPLIT_EXECUTABLE}")
  endif()
  # A new MTPC tool may build differently: relink (the inner build's restat
  # keeps the work to what really changes).
  foreach(tool IN LISTS tools)
    if(IS_ABSOLUTE "${tool}" AND EXISTS "${tool}")
      set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${tool}")
    endif()
  endforeach()
  if(mode STREQUAL "dtlto")
    # lld runs mtpc-distribute on its job list; every option is one
    # -Xthinlto-distributor= word.
    list(APPEND opts "--ninja=${MTPC_NINJA_EXECUTABLE}")
    set(words "-fthinlto-distributor=${MTPC_DISTRIBUTE_EXECUTABLE}")
    foreach(o IN LISTS opts)
      list(APPEND words "-Xthinlto-distributor=${o}")
    endforeach()
    target_link_options(${target} PRIVATE ${words})
    return()
  endif()
  if(CMAKE_MAKE_PROGRAM)
    list(APPEND opts "--ninja=${CMAKE_MAKE_PROGRAM}")
  endif()
  # No job pool: links run side by side, and every inner edge of every link
  # takes a token of one machine-wide budget first (common/jobs.h), so two
  # links neither oversubscribe the machine nor wait while cores are idle.
  set(launcher "${MTPC_LINK_EXECUTABLE}" ${opts} --)
  set_target_properties(${target} PROPERTIES
    C_LINKER_LAUNCHER "${launcher}"
    CXX_LINKER_LAUNCHER "${launcher}")
endfunction()

# Once per project, from the first enabled static or object library: at the end
# of the configuration, when every target and its links are known,
# _mtpc_link_consumers gives the targets that link bitcode without being
# enabled the link they need. CMake before 3.19 cannot defer a call: one
# warning instead.
function(_mtpc_watch_consumers)
  get_property(done GLOBAL PROPERTY _MTPC_CONSUMERS_WATCHED)
  if(done)
    return()
  endif()
  set_property(GLOBAL PROPERTY _MTPC_CONSUMERS_WATCHED 1)
  if(CMAKE_VERSION VERSION_LESS 3.19)
    message(WARNING "MTPC: with CMake ${CMAKE_VERSION} (before 3.19) MTPC cannot "
      "find the targets that link an enabled static or object library: enable "
      "each of them too (mtpc_enable()), or its link fails on the library's "
      "ThinLTO objects (\"file not recognized\").")
    return()
  endif()
  cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _mtpc_link_consumers)
endfunction()

# The targets declared in dir and, recursively, its subdirectories (not
# imported or alias targets), each directory's own in declaration order first.
function(_mtpc_directory_targets dir out)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    _mtpc_directory_targets("${sub}" more)
    list(APPEND targets ${more})
  endforeach()
  set(${out} "${targets}" PARENT_SCOPE)
endfunction()

# The x of every $<TARGET_OBJECTS:x> in the list sources, appended to the list
# named out.
function(_mtpc_append_target_objects out sources)
  set(libs "${${out}}")
  foreach(src IN LISTS sources)
    string(REGEX MATCHALL "\\$<TARGET_OBJECTS:[^>]+>" found "${src}")
    foreach(expr IN LISTS found)
      string(REGEX REPLACE "^\\$<TARGET_OBJECTS:(.*)>$" "\\1" lib "${expr}")
      list(APPEND libs "${lib}")
    endforeach()
  endforeach()
  set(${out} "${libs}" PARENT_SCOPE)
endfunction()

# The enabled static and object libraries (out) whose objects reach the link of
# target: its $<TARGET_OBJECTS:lib> sources and its LINK_LIBRARIES, then,
# transitively, what the libraries it links bring to a link: the
# INTERFACE_LINK_LIBRARIES and INTERFACE_SOURCES of any library, and a static or
# object library's own LINK_LIBRARIES and $<TARGET_OBJECTS:> sources (its private
# dependencies; also $<LINK_ONLY:lib> in its interface). Of the generator
# expressions only $<LINK_ONLY:>, $<TARGET_OBJECTS:>, $<LINK_LIBRARY:> and
# $<LINK_GROUP:> are understood; items in others are not followed. Errs on the
# side of finding a library: a needless ThinLTO link still links.
function(_mtpc_bitcode_libraries target out)
  set(found "")
  set(seen "")
  set(queue "")
  get_property(sources TARGET ${target} PROPERTY SOURCES)
  _mtpc_append_target_objects(queue "${sources}")
  get_property(libs TARGET ${target} PROPERTY LINK_LIBRARIES)
  list(APPEND queue ${libs})
  while(NOT "${queue}" STREQUAL "")  # (not while(queue): a target may be named "n")
    list(GET queue 0 item)
    list(REMOVE_AT queue 0)
    while(item MATCHES "^\\$<(LINK_ONLY|TARGET_OBJECTS):(.*)>$")
      set(item "${CMAKE_MATCH_2}")
    endwhile()
    if(item MATCHES "^\\$<LINK_(LIBRARY|GROUP):[^,>]*,(.*)>$")
      # $<LINK_LIBRARY:feature,lib...>, $<LINK_GROUP:feature,lib...>
      string(REPLACE "," ";" libs "${CMAKE_MATCH_2}")
      list(APPEND queue ${libs})
      continue()
    endif()
    # Generator expressions, the ::@ markers of target_link_libraries() called
    # from another directory, flags, plain library names and paths.
    if(item MATCHES "^(\\$<|::@|-)" OR NOT TARGET "${item}")
      continue()
    endif()
    get_property(aliased TARGET "${item}" PROPERTY ALIASED_TARGET)
    if(NOT "${aliased}" STREQUAL "")
      set(item "${aliased}")
    endif()
    if(item IN_LIST seen)
      continue()
    endif()
    list(APPEND seen "${item}")
    get_property(type TARGET "${item}" PROPERTY TYPE)
    if(type STREQUAL "EXECUTABLE")
      continue()  # linked for its exports (ENABLE_EXPORTS): native
    endif()
    get_property(imported TARGET "${item}" PROPERTY IMPORTED)
    if(type MATCHES "^(STATIC|OBJECT)_LIBRARY$" AND NOT imported)
      get_property(enabled TARGET "${item}" PROPERTY _MTPC_BITCODE)
      if(enabled)
        list(APPEND found "${item}")
      endif()
      get_property(more TARGET "${item}" PROPERTY LINK_LIBRARIES)
      list(APPEND queue ${more})
      get_property(sources TARGET "${item}" PROPERTY SOURCES)
      _mtpc_append_target_objects(queue "${sources}")
    endif()
    get_property(more TARGET "${item}" PROPERTY INTERFACE_LINK_LIBRARIES)
    list(APPEND queue ${more})
    get_property(sources TARGET "${item}" PROPERTY INTERFACE_SOURCES)
    _mtpc_append_target_objects(queue "${sources}")
  endwhile()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# Deferred to the end of the top directory (_mtpc_watch_consumers): every
# executable, shared or module library of the project that is not enabled but
# links the objects of an enabled static or object library gets the ThinLTO
# link they need (plain ThinLTO by lld, not MTPC), with one STATUS line naming
# those libraries. Linked by another compiler than Clang, it cannot read them:
# one warning.
function(_mtpc_link_consumers)
  _mtpc_directory_targets("${CMAKE_SOURCE_DIR}" targets)
  foreach(t IN LISTS targets)
    get_property(type TARGET ${t} PROPERTY TYPE)
    if(NOT type MATCHES "^(EXECUTABLE|SHARED_LIBRARY|MODULE_LIBRARY)$")
      continue()
    endif()
    get_property(enabled TARGET ${t} PROPERTY _MTPC_BITCODE)
    if(enabled)
      continue()
    endif()
    _mtpc_bitcode_libraries(${t} libs)
    if("${libs}" STREQUAL "")
      continue()
    endif()
    string(REPLACE ";" ", " names "${libs}")
    _mtpc_target_languages(${t} langs)
    set(other "")
    foreach(lang IN LISTS langs)
      if(NOT other AND NOT CMAKE_${lang}_COMPILER_ID STREQUAL "Clang")
        set(other "${CMAKE_${lang}_COMPILER_ID} ${CMAKE_${lang}_COMPILER}")
      endif()
    endforeach()
    if(other)
      message(WARNING "MTPC: ${t} links the ThinLTO objects of ${names} "
        "(enabled) but is built by ${other}, which cannot link them: build "
        "${t} with Clang, or those libraries without mtpc_enable().")
      continue()
    endif()
    target_link_options(${t} PRIVATE -flto=thin -fuse-ld=lld)
    message(STATUS "MTPC: ${t} links the ThinLTO objects of ${names} (enabled): "
      "linked with -flto=thin -fuse-ld=lld")
  endforeach()
endfunction()

function(mtpc_enable_all)
  cmake_parse_arguments(PARSE_ARGV 0 _MTPC "" "DIRECTORY" "EXCLUDE")
  if(_MTPC_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "mtpc_enable_all(): unknown arguments: ${_MTPC_UNPARSED_ARGUMENTS}")
  endif()
  set(dir "${CMAKE_CURRENT_SOURCE_DIR}")
  if(_MTPC_DIRECTORY)
    get_filename_component(dir "${_MTPC_DIRECTORY}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  endif()
  _mtpc_directory_targets("${dir}" targets)
  set(enabled "")
  foreach(t IN LISTS targets)
    get_property(type TARGET ${t} PROPERTY TYPE)
    if(t IN_LIST _MTPC_EXCLUDE OR NOT type MATCHES
       "^(EXECUTABLE|SHARED_LIBRARY|MODULE_LIBRARY|STATIC_LIBRARY|OBJECT_LIBRARY)$")
      continue()
    endif()
    get_property(done TARGET ${t} PROPERTY _MTPC_ENABLED)
    _mtpc_target_languages(${t} langs)
    if(done OR NOT langs)
      continue()  # enabled already, or no C or C++ (Fortran, assembly, ...)
    endif()
    mtpc_enable(${t})
    get_property(done TARGET ${t} PROPERTY _MTPC_ENABLED)
    if(done)
      list(APPEND enabled ${t})
    endif()
  endforeach()
  get_property(why GLOBAL PROPERTY _MTPC_UNUSABLE)
  if(why)
    return()  # mtpc_enable() said why, once
  endif()
  list(LENGTH enabled n)
  set(what "${n} targets")
  if(n EQUAL 1)
    set(what "1 target")
  endif()
  string(REPLACE ";" ", " names "${enabled}")
  if(NOT "${names}" STREQUAL "")
    set(names ": ${names}")
  endif()
  message(STATUS "MTPC: enabled ${what} under ${dir}${names}")
endfunction()

cmake_policy(POP)
