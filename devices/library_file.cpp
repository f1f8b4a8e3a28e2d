#include "devices/library_file.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <glob.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/error.hpp"

namespace tj {

namespace {

namespace fs = std::filesystem;

constexpr unsigned char kNativeClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;

class OpenFile {
 public:
  explicit OpenFile(const std::string& path) : fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)) {}
  ~OpenFile() {
    if (fd >= 0) ::close(fd);
  }
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  const int fd;
};

// Reads `bytes` at `offset`; false where the file ends first or cannot be read.
bool readAt(int fd, void* out, size_t bytes, uint64_t offset) {
  auto* to = static_cast<char*>(out);
  while (bytes > 0) {
    ssize_t n = ::pread(fd, to, bytes, off_t(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    to += n, bytes -= size_t(n), offset += uint64_t(n);
  }
  return true;
}

// Whether [offset, offset + bytes) lies in a file of `size` bytes, without overflowing.
bool within(uint64_t offset, uint64_t bytes, uint64_t size) { return offset <= size && bytes <= size - offset; }

bool isThere(const fs::path& file) {
  std::error_code ec;
  return fs::exists(file, ec);
}

// The folders an ld.so.conf file names, with those of the files it includes, in order.
// `depth` stops include cycles.
void confFolders(const fs::path& conf, int depth, std::vector<fs::path>& folders) {
  std::ifstream in(conf);
  for (std::string line; std::getline(in, line);) {
    line = line.substr(0, line.find('#'));
    size_t begin = line.find_first_not_of(" \t"), end = line.find_last_not_of(" \t\r");
    if (begin == std::string::npos) continue;
    line = line.substr(begin, end + 1 - begin);
    if (line.starts_with("include") && line.size() > 7 && (line[7] == ' ' || line[7] == '\t')) {
      fs::path pattern = line.substr(line.find_first_not_of(" \t", 7));
      if (pattern.is_relative()) pattern = conf.parent_path() / pattern;
      glob_t found{};
      if (depth < 8 && ::glob(pattern.c_str(), 0, nullptr, &found) == 0)
        for (size_t i = 0; i < found.gl_pathc; ++i) confFolders(found.gl_pathv[i], depth + 1, folders);
      ::globfree(&found);
    } else if (line.starts_with('/')) {
      folders.emplace_back(line);
    }
  }
}

}  // namespace

std::string elfFileProblem(const std::string& path) {
  OpenFile file(path);  // without blocking, should it be a FIFO
  struct stat info {};
  if (file.fd < 0 || ::fstat(file.fd, &info) != 0) return "";
  if (!S_ISREG(info.st_mode)) return path + " is not a regular file";
  const uint64_t size = uint64_t(info.st_size);
  ElfW(Ehdr) header{};
  readAt(file.fd, &header, std::min<uint64_t>(size, sizeof header), 0);
  if (size < EI_NIDENT || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != kNativeClass)
    return "";
  auto truncated = [&](const std::string& what) {
    return fmt::format("{} is truncated: {}, but the file has {} bytes", path, what, size);
  };
  if (size < sizeof header) return truncated(fmt::format("its ELF header takes {} bytes", sizeof header));
  if (header.e_phentsize != sizeof(ElfW(Phdr))) return "";  // dlopen refuses it
  uint64_t table = uint64_t(header.e_phnum) * sizeof(ElfW(Phdr));
  if (!within(header.e_phoff, table, size))
    return truncated(fmt::format("its program headers take {} bytes at offset {}", table, header.e_phoff));
  std::vector<ElfW(Phdr)> segments(header.e_phnum);
  if (!readAt(file.fd, segments.data(), table, header.e_phoff)) return truncated("its program headers cannot be read");
  for (size_t i = 0; i < segments.size(); ++i) {
    const ElfW(Phdr)& s = segments[i];
    if (s.p_type == PT_LOAD && !within(s.p_offset, s.p_filesz, size))
      return truncated(fmt::format("program header {} loads {} bytes at offset {}", i, s.p_filesz, s.p_offset));
  }
  return "";
}

std::vector<std::string> libraryCandidates(const std::string& library) {
  if (library.find('/') != std::string::npos) return {library};
  // glibc splits $LD_LIBRARY_PATH at ':' and ';'; an empty element is the current folder.
  if (const char* list = std::getenv("LD_LIBRARY_PATH")) {
    std::string_view rest = list;
    while (!rest.empty()) {
      size_t end = std::min(rest.find_first_of(":;"), rest.size());
      fs::path file = fs::path(end ? std::string(rest.substr(0, end)) : ".") / library;
      if (isThere(file)) return {file.string()};
      rest.remove_prefix(std::min(end + 1, rest.size()));
    }
  }
  std::vector<fs::path> folders;
  confFolders("/etc/ld.so.conf", 0, folders);
  for (const char* system : {"/lib64", "/usr/lib64", "/lib", "/usr/lib"}) folders.emplace_back(system);
  std::vector<std::string> files;
  for (const fs::path& folder : folders) {
    std::string file = (folder / library).string();
    if (isThere(file) && std::find(files.begin(), files.end(), file) == files.end()) files.push_back(file);
  }
  return files;
}

std::string libraryFileProblem(const std::string& library) {
  for (const std::string& file : libraryCandidates(library))
    if (std::string reason = elfFileProblem(file); !reason.empty()) return reason;
  return "";
}

void* openLibrary(const std::string& library) {
  // A truncated file would kill the process inside dlopen (SIGBUS).
  if (std::string problem = libraryFileProblem(library); !problem.empty()) throw Error(problem);
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw Error("dlopen(" + library + "): " + dlerror());
  return handle;
}

std::string loadFirstLibrary(const std::vector<std::string>& libraries, const std::function<void(const std::string&)>& load,
                             const std::function<void()>& undo, std::string& problem) {
  problem.clear();
  for (const std::string& library : libraries) {
    try {
      load(library);
      return library;
    } catch (const std::exception& e) {
      bool missing = std::string_view(e.what()).find("cannot open shared object file") != std::string_view::npos;
      if (!missing && problem.empty()) problem = e.what();
      undo();
    }
  }
  if (problem.empty()) problem = fmt::format("no {} to load", fmt::join(libraries, " or "));
  return "";
}

}  // namespace tj
