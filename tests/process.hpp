// Running other programs from tests: the tools, and child copies of the test binary.
#pragma once
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

namespace tj::test {

struct CommandResult {
  int status;          // exit status, -1 when the child did not exit normally
  std::string output;  // stdout and stderr
};

// Runs the commands at the same time through the shell; results in order.
inline std::vector<CommandResult> runConcurrently(const std::vector<std::string>& commands) {
  std::vector<FILE*> pipes;
  for (const std::string& c : commands) pipes.push_back(popen((c + " 2>&1").c_str(), "r"));
  std::vector<CommandResult> results;
  for (FILE* pipe : pipes) {
    REQUIRE(pipe != nullptr);
    std::string out;
    std::array<char, 4096> buf;
    while (size_t n = fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
    int status = pclose(pipe);
    results.push_back({WIFEXITED(status) ? WEXITSTATUS(status) : -1, out});
  }
  return results;
}

inline CommandResult runCommand(const std::string& command) { return runConcurrently({command})[0]; }

}  // namespace tj::test
