# Stages the installed headers: the headers ROOTS (';'-separated, relative to SRC) include,
# transitively, copied to OUT/tilejit/<folder>/ with each `#include "<folder>/x.hpp"` of the
# tree rewritten to `#include <tilejit/<folder>/x.hpp>`, plus the umbrellas OUT/tilejit/tilejit.hpp and OUT/tilejit/grad.hpp.
# Inside the tree headers name each other by folder ("ir/ir.hpp"); installed, only
# <tilejit/...> is on a consumer's include path, so the stage folders do not become
# top-level include paths of every consumer. Files are rewritten only when they change, and
# a header that left the set is removed. Writes STAMP last.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/write_if_changed.cmake)
set(pending ${ROOTS})
set(done "")
while(pending)
  list(POP_FRONT pending header)
  if(header IN_LIST done)
    continue()
  endif()
  list(APPEND done ${header})
  file(READ "${SRC}/${header}" text)
  string(REGEX MATCHALL "#include \"[^\"]+\"" includes "${text}")
  foreach(include IN LISTS includes)
    string(REGEX REPLACE "#include \"([^\"]+)\"" "\\1" included "${include}")
    if(NOT EXISTS "${SRC}/${included}")
      message(FATAL_ERROR "${header} includes \"${included}\", which is not a file of the tree: an installed "
                          "header could not find it")
    endif()
    list(APPEND pending "${included}")
  endforeach()
  string(REGEX REPLACE "#include \"([^\"]+)\"" "#include <tilejit/\\1>" text "${text}")
  write_if_changed("${OUT}/tilejit/${header}" "${text}")
endwhile()

write_if_changed("${OUT}/tilejit/tilejit.hpp"
  "// tilejit: write a kernel as a C++ lambda over tiles. Include this one header.\n#pragma once\n#include <tilejit/dsl/tilejit.hpp>\n")
write_if_changed("${OUT}/tilejit/grad.hpp"
  "// tilejit's gradient graph (tj::grad::Graph).\n#pragma once\n#include <tilejit/grad/graph.hpp>\n")

file(GLOB_RECURSE existing RELATIVE "${OUT}/tilejit" "${OUT}/tilejit/*")
foreach(file IN LISTS existing)
  if(NOT file IN_LIST done AND NOT file STREQUAL "tilejit.hpp" AND NOT file STREQUAL "grad.hpp")
    file(REMOVE "${OUT}/tilejit/${file}")
  endif()
endforeach()
file(TOUCH "${STAMP}")
