#include "extender/node/command_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace topofit::node {
namespace {

// Reads whatever is ready on `fd` into `out`; returns false at end of file.
bool Drain(int fd, std::string* out) {
  char buf[8192];
  ssize_t n = read(fd, buf, sizeof buf);
  if (n > 0) { out->append(buf, static_cast<size_t>(n)); return true; }
  return n < 0 && (errno == EINTR || errno == EAGAIN);
}

std::string FirstLine(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  return line.size() > 300 ? line.substr(0, 300) + "..." : line;
}

}  // namespace

Result<std::string> RunCommand(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  if (argv.empty()) return Error{"no command"};
  std::string what = argv[0];
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return Error{fmt::format("pipe: {}", std::strerror(errno))};
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]); close(out_pipe[1]);
    return Error{fmt::format("pipe: {}", std::strerror(errno))};
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) {
    close(out_pipe[0]); close(err_pipe[0]);
    return Error{fmt::format("cannot run '{}': {}", what, std::strerror(rc))};
  }

  std::string out, err;
  bool out_open = true, err_open = true, timed_out = false;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (out_open || err_open) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) { timed_out = true; break; }
    pollfd fds[2] = {{out_open ? out_pipe[0] : -1, POLLIN, 0}, {err_open ? err_pipe[0] : -1, POLLIN, 0}};
    int n = poll(fds, 2, static_cast<int>(left.count()));
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    if (out_open && fds[0].revents) out_open = Drain(out_pipe[0], &out);
    if (err_open && fds[1].revents) err_open = Drain(err_pipe[0], &err);
  }
  close(out_pipe[0]);
  close(err_pipe[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (timed_out) return Error{fmt::format("'{}' timed out after {} ms", what, timeout.count())};
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return out;
  std::string how = WIFEXITED(status) ? fmt::format("exited with status {}", WEXITSTATUS(status))
                                      : fmt::format("was killed by signal {}", WTERMSIG(status));
  std::string detail = FirstLine(err.empty() ? out : err);
  return Error{fmt::format("'{}' {}{}{}", what, how, detail.empty() ? "" : ": ", detail)};
}

}  // namespace topofit::node
