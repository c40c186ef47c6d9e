"""MTPC.cmake in the projects a new user brings (issue: a new user's CMake projects):

* a project whose cmake_minimum_required is old (2.8.12, 3.0): the module sets the policies it
  needs itself, so include(MTPC) works there without a policy warning;
* a target that is not enabled but links an enabled static or object library, whose objects
  are ThinLTO bitcode: it gets the plain ThinLTO link it needs (-flto=thin -fuse-ld=lld), with
  one STATUS line, instead of a "file not recognized" from the default linker;
* a project that cannot be edited: -DCMAKE_PROJECT_INCLUDE=<MTPC>/mtpc-project-include.cmake
  enables every C/C++ executable and library (mtpc_enable_all()).

The projects are configured like a user's (clang, Ninja, -DMTPC_DIR=<build>/cmake); the
default linker stays GNU ld for everything MTPC does not touch."""
import re

from conftest import BUILD, ROOT, llvm_tool, run, tool
from test_build_integration import CLANG, CLANGXX, mtpc_config_dir


def configure(src, bdir, extra=()):
    return run(["cmake", "-S", src, "-B", bdir, "-G", "Ninja",
                f"-DCMAKE_C_COMPILER={CLANG}", f"-DCMAKE_CXX_COMPILER={CLANGXX}",
                f"-DCMAKE_AR={llvm_tool('llvm-ar')}", "-DCMAKE_BUILD_TYPE=Release",
                f"-DMTPC_DIR={mtpc_config_dir()}", "-DMTPC_SPLIT_THRESHOLD=0",
                "-DMTPC_MAX_PARTITIONS=2", "-DMTPC_JOBS=2",
                f"-DMTPC_CACHE={bdir / 'plans.sqlite'}", *extra])


def build(bdir):
    r = run(["cmake", "--build", bdir])
    return r.stdout + r.stderr


def write(root, files):
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def policy_warnings(stderr):
    """The CMake warnings of stderr that are about a policy (CMP0...)."""
    blocks = re.split(r"\n(?=CMake (?:Warning|Error|Deprecation Warning))", "\n" + stderr)
    return [b for b in blocks if re.search(r"CMP0\d{3}", b)]


def link_command(bdir, target):
    """The link rule's line of build.ninja for <target> (its FLAGS/LINK_FLAGS follow)."""
    text = (bdir / "build.ninja").read_text()
    m = re.search(rf"\nbuild {re.escape(target)}: \S*LINKER\S*[^\n]*\n((?:  [^\n]*\n)*)", text)
    assert m, f"no link edge for {target}"
    return m.group(1)


# ---- 1. projects with an old cmake_minimum_required ----

OLD_SOURCES = {
    "lib.c": "int lib_twice(int x) { return 2 * x; }\n",
    "obj.c": "int obj_plus(int x) { return x + 5; }\n",
    "main.c": '#include <stdio.h>\nint lib_twice(int); int obj_plus(int);\n'
              'int main(void) { printf("%d\\n", obj_plus(lib_twice(20))); return 0; }\n',
    "tool.c": '#include <stdio.h>\nint lib_twice(int); int obj_plus(int);\n'
              'int main(void) { printf("tool %d\\n", lib_twice(obj_plus(1))); return 0; }\n',
}


def old_project(version, load):
    return f"""cmake_minimum_required(VERSION {version})
project(old C)
{load}
add_library(lib STATIC lib.c)
add_library(objs OBJECT obj.c)
add_executable(app main.c $<TARGET_OBJECTS:objs>)
target_link_libraries(app lib)
mtpc_enable(lib)
mtpc_enable(objs)
mtpc_enable(app)
# not enabled: links the enabled libraries' bitcode through lld's ThinLTO
add_executable(tool tool.c $<TARGET_OBJECTS:objs>)
target_link_libraries(tool lib)
"""


def test_old_minimum_version_include(tmp_path):
    """cmake_minimum_required(VERSION 2.8.12) + include(MTPC) (IN_LIST needs CMP0057, the
    SOURCES of a target CMP0051): configures without an error or a policy warning, and the
    enabled target links through MTPC."""
    src, b = tmp_path / "src", tmp_path / "b"
    write(src, OLD_SOURCES)
    write(src, {"CMakeLists.txt": old_project("2.8.12", "include(MTPC)")})
    r = configure(src, b, [f"-DCMAKE_MODULE_PATH={ROOT / 'cmake'}",
                           f"-DMTPC_LINK_EXECUTABLE={tool('mtpc-link')}",
                           f"-DMTPC_SPLIT_EXECUTABLE={tool('mtpc-split')}"])
    assert not policy_warnings(r.stderr), r.stderr
    assert "MTPC.cmake" not in r.stderr, r.stderr
    out = build(b)
    assert re.search(r"mtpc-link: app: 3 modules, \d+ split", out), out
    assert run([b / "app"]).stdout == "45\n"
    assert run([b / "tool"]).stdout == "tool 12\n"


def test_old_minimum_version_find_package(tmp_path):
    """The same with cmake_minimum_required(VERSION 3.0) and find_package(MTPC)."""
    src, b = tmp_path / "src", tmp_path / "b"
    write(src, OLD_SOURCES)
    write(src, {"CMakeLists.txt": old_project("3.0", "find_package(MTPC REQUIRED)")})
    r = configure(src, b)
    assert not policy_warnings(r.stderr), r.stderr
    assert "MTPC.cmake" not in r.stderr, r.stderr
    out = build(b)
    assert re.search(r"mtpc-link: app: 3 modules, \d+ split", out), out
    assert run([b / "app"]).stdout == "45\n"
    assert run([b / "tool"]).stdout == "tool 12\n"


def test_module_policies_stay_inside_the_module(tmp_path):
    """The policies MTPC.cmake sets do not leak into the project: after find_package(MTPC) a
    2.8.12 project still has CMP0057 unset, and including the module twice is harmless."""
    src, b = tmp_path / "src", tmp_path / "b"
    write(src, {"main.c": "int main(void) { return 0; }\n", "CMakeLists.txt": """
cmake_minimum_required(VERSION 2.8.12)
project(scope C)
find_package(MTPC REQUIRED)
find_package(MTPC REQUIRED)
include(MTPC)
cmake_policy(GET CMP0057 p57)
cmake_policy(GET CMP0051 p51)
message(STATUS "policies after MTPC: CMP0057=<${p57}> CMP0051=<${p51}>")
add_executable(app main.c)
mtpc_enable(app)
"""})
    r = configure(src, b)
    assert "policies after MTPC: CMP0057=<> CMP0051=<>" in r.stdout, r.stdout
    assert not policy_warnings(r.stderr), r.stderr
    assert "mtpc-link: app:" in build(b)


# ---- 2. targets that link an enabled library without being enabled ----

CONSUMERS = {
    "CMakeLists.txt": """cmake_minimum_required(VERSION 3.20)
project(consumers C)
find_package(MTPC REQUIRED)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
add_library(objlib OBJECT obj.c)
add_library(stlib STATIC st.c)
add_library(ns::st ALIAS stlib)
mtpc_enable(objlib)
mtpc_enable(stlib)
# not enabled: one takes objlib's objects, links stlib
add_executable(app main.c $<TARGET_OBJECTS:objlib>)
target_link_libraries(app PRIVATE stlib)
# links nothing enabled: untouched
add_executable(plain plain.c)
add_subdirectory(sub)
""",
    "sub/CMakeLists.txt": """# mid is not enabled and links stlib privately: $<LINK_ONLY:stlib> reaches plug's link
add_library(mid STATIC mid.c)
target_link_libraries(mid PRIVATE ns::st)
add_library(plug SHARED plug.c)
target_link_libraries(plug PRIVATE mid)
# links plug only (a shared library): native, untouched
add_executable(app2 app2.c)
target_link_libraries(app2 PRIVATE plug)
# from another directory than app's: CMake wraps the item in ::@ markers
target_link_libraries(app PRIVATE m)
""",
    "obj.c": "int obj_f(int x) { return x * 3; }\n",
    "st.c": "int st_f(int x) { return x + 4; }\n",
    "main.c": '#include <stdio.h>\nint obj_f(int); int st_f(int);\n'
              'int main(void) { printf("app %d\\n", st_f(obj_f(2))); return 0; }\n',
    "plain.c": '#include <stdio.h>\nint main(void) { puts("plain"); return 0; }\n',
    "sub/mid.c": "int st_f(int);\nint mid_f(int x) { return st_f(x) * 10; }\n",
    "sub/plug.c": "int mid_f(int);\nint plug_f(int x) { return mid_f(x) + 1; }\n",
    "sub/app2.c": '#include <stdio.h>\nint plug_f(int);\n'
                  'int main(void) { printf("app2 %d\\n", plug_f(1)); return 0; }\n',
}

LTO_LINE = ": linked with -flto=thin -fuse-ld=lld"


def test_consumers_of_enabled_libraries_link_thinlto(tmp_path):
    """An enabled OBJECT and STATIC library hold ThinLTO bitcode: the executable that takes
    the objects ($<TARGET_OBJECTS:>) and links the archive, and the shared library that gets
    it through a static library it links ($<LINK_ONLY:>), are not enabled, so GNU ld would
    say "file not recognized". They get -flto=thin -fuse-ld=lld (one STATUS line each); the
    targets that reach no bitcode keep the default linker."""
    src, b = tmp_path / "src", tmp_path / "b"
    write(src, CONSUMERS)
    r = configure(src, b)
    lines = [l for l in r.stdout.splitlines() if l.startswith("-- MTPC: ")]
    assert "-- MTPC: app links the ThinLTO objects of objlib, stlib (enabled)" + LTO_LINE \
        in lines, r.stdout
    assert "-- MTPC: plug links the ThinLTO objects of stlib (enabled)" + LTO_LINE in lines, \
        r.stdout
    assert not [l for l in lines if re.match(r"-- MTPC: (plain|app2|mid|objlib|stlib) ", l)]
    assert "mtpc" not in r.stderr.lower(), r.stderr
    for t in ("app", "sub/libplug.so"):
        assert "-fuse-ld=lld" in link_command(b, t), t
    for t in ("plain", "sub/app2"):
        assert "-fuse-ld=lld" not in link_command(b, t) and "-flto" not in link_command(b, t)
    out = build(b)
    assert "mtpc-link" not in out, out   # nothing enabled links through MTPC here
    assert run([b / "app"]).stdout == "app 10\n"
    assert run([b / "sub" / "app2"]).stdout == "app2 51\n"
    assert run([b / "plain"]).stdout == "plain\n"


def test_enabled_consumers_are_left_alone(tmp_path):
    """The same project with every linking target enabled: no STATUS line, MTPC links them."""
    src, b = tmp_path / "src", tmp_path / "b"
    files = dict(CONSUMERS)
    files["CMakeLists.txt"] += "mtpc_enable(app)\n"
    files["sub/CMakeLists.txt"] += "mtpc_enable(plug)\n"
    write(src, files)
    r = configure(src, b)
    assert "ThinLTO objects of" not in r.stdout, r.stdout
    out = build(b)
    assert "mtpc-link: app:" in out and "mtpc-link: libplug.so:" in out, out
    assert run([b / "app"]).stdout == "app 10\n"
    assert run([b / "sub" / "app2"]).stdout == "app2 51\n"


# ---- 3. a project that cannot be edited: CMAKE_PROJECT_INCLUDE ----

UNMODIFIED = {
    "CMakeLists.txt": """cmake_minimum_required(VERSION 3.20)
project(untouched C CXX)
add_library(core STATIC core.c)
add_subdirectory(tools)
add_executable(app main.cpp)
target_link_libraries(app PRIVATE core)
add_custom_target(docs COMMAND ${CMAKE_COMMAND} -E echo docs)
add_library(iface INTERFACE)
""",
    # a subproject with project() of its own: the include runs again, harmlessly
    "tools/CMakeLists.txt": """project(tools C)
add_executable(calc calc.c)
target_link_libraries(calc PRIVATE core)
""",
    "core.c": "int core_f(int x) { return x * x + 1; }\n",
    "main.cpp": '#include <cstdio>\nextern "C" int core_f(int);\n'
                'int main() { std::printf("app %d\\n", core_f(6)); }\n',
    "tools/calc.c": '#include <stdio.h>\nint core_f(int);\n'
                    'int main(void) { printf("calc %d\\n", core_f(3)); return 0; }\n',
}


def test_project_include_enables_an_unmodified_project(tmp_path):
    """-DCMAKE_PROJECT_INCLUDE=cmake/mtpc-project-include.cmake on a project whose
    CMakeLists.txt never mentions MTPC: every C/C++ executable and library is enabled (not
    the custom or interface targets), the links go through mtpc-link and the programs run."""
    src, b = tmp_path / "src", tmp_path / "b"
    write(src, UNMODIFIED)
    include = ROOT / "cmake" / "mtpc-project-include.cmake"
    r = configure(src, b, [f"-DCMAKE_PROJECT_INCLUDE={include}"])
    assert "mtpc" not in r.stderr.lower(), r.stderr
    enabled = [l for l in r.stdout.splitlines() if l.startswith("-- MTPC: enabled ")]
    assert len(enabled) == 1, r.stdout
    assert re.search(r"-- MTPC: enabled 3 targets under \S+: core, app, calc$", enabled[0]), \
        enabled
    out = build(b)
    assert re.search(r"mtpc-link: app: 2 modules, 2 split", out), out
    assert re.search(r"mtpc-link: calc: 2 modules, 2 split", out), out
    assert (b / "app.mtpc").is_dir() and (b / "tools" / "calc.mtpc").is_dir()
    assert run([b / "app"]).stdout == "app 37\n"
    assert run([b / "tools" / "calc"]).stdout == "calc 10\n"


def test_project_include_from_an_install(tmp_path):
    """The installed include file finds the installed MTPC next to it (no MTPC_DIR)."""
    prefix = tmp_path / "prefix"
    run(["cmake", "--install", BUILD, "--prefix", prefix])
    include = prefix / "share" / "mtpc" / "cmake" / "mtpc-project-include.cmake"
    assert include.exists()
    src, b = tmp_path / "src", tmp_path / "b"
    write(src, UNMODIFIED)
    r = run(["cmake", "-S", src, "-B", b, "-G", "Ninja", f"-DCMAKE_C_COMPILER={CLANG}",
             f"-DCMAKE_CXX_COMPILER={CLANGXX}", f"-DCMAKE_AR={llvm_tool('llvm-ar')}",
             f"-DCMAKE_PROJECT_INCLUDE={include}", "-DMTPC_SPLIT_THRESHOLD=0",
             "-DMTPC_MAX_PARTITIONS=2", f"-DMTPC_CACHE={tmp_path / 'plans.sqlite'}"])
    assert "mtpc" not in r.stderr.lower(), r.stderr
    cache = (b / "CMakeCache.txt").read_text()
    assert f"MTPC_LINK_EXECUTABLE:FILEPATH={prefix}/bin/mtpc-link" in cache
    out = build(b)
    assert "mtpc-link: app:" in out and "mtpc-link: calc:" in out, out
    assert run([b / "app"]).stdout == "app 37\n"


def test_enable_all_in_a_directory(tmp_path):
    """mtpc_enable_all(DIRECTORY tools EXCLUDE ...) in a project's own CMakeLists.txt: the
    targets of that directory only, less the excluded ones; a target enabled before is not
    enabled twice."""
    src, b = tmp_path / "src", tmp_path / "b"
    files = dict(UNMODIFIED)
    files["tools/CMakeLists.txt"] += "add_executable(calc2 calc.c)\n" \
                                     "target_link_libraries(calc2 PRIVATE core)\n"
    files["CMakeLists.txt"] += """find_package(MTPC REQUIRED)
mtpc_enable(core)
mtpc_enable(calc2)
mtpc_enable_all(DIRECTORY tools EXCLUDE nothing_by_that_name)
mtpc_enable_all(EXCLUDE app)
"""
    write(src, files)
    r = configure(src, b)
    assert re.search(r"-- MTPC: enabled 1 target under \S+/tools: calc\n", r.stdout), r.stdout
    assert re.search(r"-- MTPC: enabled 0 targets under \S+/src\n", r.stdout), r.stdout
    assert "-- MTPC: app links the ThinLTO objects of core (enabled)" + LTO_LINE in r.stdout
    # calc2 enabled once: its link options once
    assert link_command(b, "tools/calc2").count("-fuse-ld=lld") == 1
    out = build(b)
    assert "mtpc-link: calc:" in out and "mtpc-link: calc2:" in out, out
    assert "mtpc-link: app:" not in out, out
    assert run([b / "app"]).stdout == "app 37\n"
