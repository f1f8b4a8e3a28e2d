#include "jit/cache_file.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

namespace tj::jit {

namespace fs = std::filesystem;

namespace {

std::string fileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "a file of another kind";
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() { ::close(fd_); }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;

 private:
  int fd_;
};

std::vector<char> readAll(int fd, size_t size) {
  std::vector<char> bytes(size);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::read(fd, bytes.data() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(n < 0 ? std::string("cannot read it: ") + std::strerror(errno) : "it shrank while read");
    done += static_cast<size_t>(n);
  }
  return bytes;
}

// writeFileAtomically's temporaries are "<name>.tmp.<pid>.<count>".
bool isTemporary(const std::string& name) {
  auto digits = [](std::string_view s) { return !s.empty() && s.find_first_not_of("0123456789") == s.npos; };
  size_t at = name.rfind(".tmp.");
  if (at == std::string::npos) return false;
  std::string_view rest = std::string_view(name).substr(at + 5);
  size_t dot = rest.find('.');
  return dot != rest.npos && digits(rest.substr(0, dot)) && digits(rest.substr(dot + 1));
}

// A write takes milliseconds: a temporary this old belongs to a writer that died
// between writing and renaming it, even on a slow network disk.
constexpr auto kStaleTemporary = std::chrono::minutes(10);

// Removes the stale temporaries in `dir`, once per folder and process. Best
// effort: a folder that cannot be listed keeps them.
void removeStaleTemporaries(const fs::path& dir) {
  if (!firstTime("stale temporaries in " + dir.string())) return;
  auto now = fs::file_time_type::clock::now();
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!isTemporary(it->path().filename().string())) continue;
    std::error_code ignored;
    fs::file_time_type written = it->last_write_time(ignored);
    if (ignored || now - written < kStaleTemporary) continue;
    if (fs::remove(it->path(), ignored)) spdlog::info("tilejit: removed {}, left by a writer that died", it->path().string());
  }
}

// While one lives, a write past the file size limit (ulimit -f) on this thread fails with
// EFBIG instead of raising SIGXFSZ, whose default action kills the process. The signal is
// blocked on this thread only, leaving other threads' handling alone, and what such a
// write left pending is taken before the old mask returns.
class FileSizeSignalBlocked {
 public:
  FileSizeSignalBlocked() {
    sigemptyset(&signal_);
    sigaddset(&signal_, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &signal_, &previous_);
  }
  ~FileSizeSignalBlocked() {
    if (!sigismember(&previous_, SIGXFSZ)) {
      timespec now{};
      while (sigtimedwait(&signal_, nullptr, &now) == SIGXFSZ) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  FileSizeSignalBlocked(const FileSizeSignalBlocked&) = delete;
  FileSizeSignalBlocked& operator=(const FileSizeSignalBlocked&) = delete;

 private:
  sigset_t signal_{}, previous_{};
};

// Creates `path` holding `bytes`. Throws Error with the system's reason ("No space left on
// device", "File too large").
void writeNewFile(const fs::path& path, std::span<const char> bytes) {
  auto failed = [&](const char* what) {
    return Error("cannot " + std::string(what) + " " + path.string() + ": " + std::strerror(errno));
  };
  FileSizeSignalBlocked blocked;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) throw failed("create");
  for (size_t done = 0; done < bytes.size();) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;  // no progress on a regular file
      Error e = failed("write");
      ::close(fd);
      throw e;
    }
    done += size_t(n);
  }
  if (::close(fd) != 0 && errno != EINTR) throw failed("write");  // where a network disk reports a full disk
}

}  // namespace

std::optional<std::vector<char>> readRegularFile(const fs::path& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    throw Error(std::string("cannot open it: ") + std::strerror(errno));
  }
  FileDescriptor file(fd);
  struct stat info {};
  if (::fstat(fd, &info) != 0) throw Error(std::string("cannot stat it: ") + std::strerror(errno));
  if (!S_ISREG(info.st_mode)) throw Error("it is " + fileKind(info.st_mode) + ", not a regular file");
  return readAll(fd, static_cast<size_t>(info.st_size));
}

void writeFileAtomically(const fs::path& path, std::span<const char> bytes) {
  static std::atomic<uint64_t> writes{0};
  // Unique per process and thread, in the same folder so rename is atomic.
  fs::path temp = path;
  temp += ".tmp." + std::to_string(getpid()) + "." + std::to_string(writes++);
  try {
    fs::create_directories(path.parent_path());
    removeStaleTemporaries(path.parent_path());
    writeNewFile(temp, bytes);
    fs::rename(temp, path);
  } catch (const std::exception&) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    throw;
  }
}

}  // namespace tj::jit
