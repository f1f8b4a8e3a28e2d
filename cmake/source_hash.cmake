# Writes OUT defining TILEJIT_SOURCE_HASH: a hash of every file in FILES (a
# ';'-separated list). Kernel caches key on it, so a rebuilt compiler never
# loads objects an older build generated. OUT is rewritten only when it changes.
set(combined "")
foreach(file ${FILES})
  file(SHA256 "${file}" h)
  string(APPEND combined "${h}")
endforeach()
string(SHA256 hash "${combined}")
string(SUBSTRING "${hash}" 0 16 hash)
include(${CMAKE_CURRENT_LIST_DIR}/write_if_changed.cmake)
write_if_changed("${OUT}" "#pragma once\n#define TILEJIT_SOURCE_HASH \"${hash}\"\n")
