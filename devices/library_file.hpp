// Checks on a driver library's file before dlopen maps it. glibc maps each PT_LOAD segment
// of an ELF file as its program headers say, whatever the file's size; touching a page of a
// segment past the end of a truncated file then raises SIGBUS, inside dlopen, and kills the
// process. These checks find such a file first, so the device can fall back with a reason.
//
// Covered, for the file dlopen takes: that it is a regular file, and that its ELF header,
// program header table and every PT_LOAD segment lie in the file. Not covered: a file of full
// size with damaged contents (glibc trusts what it maps), the libraries the driver itself
// needs, and, for a bare name, the rare paths dlopen searches that libraryCandidates() does
// not (see there).
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace tj {

// Why dlopen must not be given the file at `path`, or "": it is not a regular file (dlopen
// would wait on a FIFO for a writer), or it is an ELF file of this process's class whose
// header, program headers or PT_LOAD segments end past the file ("<path> is truncated: ...").
// "" for what dlopen rejects cleanly by itself: no such file, not an ELF file of this class.
std::string elfFileProblem(const std::string& path);

// The files dlopen(`library`) may map. A name with a '/' is that file. For a bare name: the
// first match in $LD_LIBRARY_PATH (as the environment has it now; dlopen reads it when the
// process starts) where there is one, which dlopen takes, else every match in
// the folders of /etc/ld.so.conf (and its includes) and the system's library folders, since
// ld.so.cache picks one of them and is not read here. Callers' RPATH/RUNPATH is not searched.
std::vector<std::string> libraryCandidates(const std::string& library);

// The first elfFileProblem() among libraryCandidates(library), or "".
std::string libraryFileProblem(const std::string& library);

// dlopen(library, RTLD_NOW | RTLD_LOCAL) once libraryFileProblem finds nothing; throws Error
// with that problem or dlerror()'s text.
void* openLibrary(const std::string& library);

// Calls `load` with each of `libraries` in turn (`undo` after each that throws) and returns the
// first that loads. Where none does, returns "" and sets `problem` to the first failure of a
// library that exists, else to "no <a> or <b> to load".
std::string loadFirstLibrary(const std::vector<std::string>& libraries, const std::function<void(const std::string&)>& load,
                             const std::function<void()>& undo, std::string& problem);

}  // namespace tj
