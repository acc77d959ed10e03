#include "core/io/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iostream>
#include <memory>
#include <string_view>

#include "core/util/error.h"

namespace schedlab {
namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symlink";
  return "not a regular file";
}

[[noreturn]] void too_large(const std::string& path, std::uint64_t max_bytes, std::string_view limit_name) {
  throw Error(path + ": input too large: larger than the limit of " + std::to_string(max_bytes) + " bytes (" + std::string(limit_name) + ")");
}

std::string read_fd(int fd, const std::string& path, std::uint64_t max_bytes, std::uint64_t size_hint, const ChunkCheck& check,
                    std::string_view limit_name) {
  std::string text;
  if (size_hint > 0) text.reserve(static_cast<std::size_t>(size_hint));
  char chunk[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {  // an empty pipe opened non-blocking: wait for it
        struct timespec pause {0, 1000000};
        nanosleep(&pause, nullptr);
        continue;
      }
      throw Error(path + ": read error: " + std::strerror(errno));
    }
    if (got == 0) break;
    if (text.size() + static_cast<std::uint64_t>(got) > max_bytes) too_large(path, max_bytes, limit_name);
    if (check) check(std::string_view(chunk, static_cast<std::size_t>(got)));
    text.append(chunk, static_cast<std::size_t>(got));
  }
  return text;
}

// ---- the inputs this process read, by identity ------------------------------

struct InputIdentity {
  dev_t dev;
  ino_t ino;
  std::string path;
};
std::vector<InputIdentity>& inputs_read() {
  static std::vector<InputIdentity> inputs;
  return inputs;
}
void remember_input(const struct stat& st, const std::string& path) {
  if (!S_ISREG(st.st_mode)) return;  // a pipe or terminal on stdin: nothing an output could replace
  for (const InputIdentity& i : inputs_read())
    if (i.dev == st.st_dev && i.ino == st.st_ino) return;
  inputs_read().push_back({st.st_dev, st.st_ino, path});
}

// ---- temporaries removed on every terminating signal -------------------------

constexpr int kMaxTemps = 8;
constexpr std::size_t kMaxPath = 4096;
char g_temp_paths[kMaxTemps][kMaxPath];
std::atomic<bool> g_temp_used[kMaxTemps];

extern "C" void remove_temps_and_die(int sig) {
  for (int i = 0; i < kMaxTemps; ++i)
    if (g_temp_used[i].load()) ::unlink(g_temp_paths[i]);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// The signals whose default action ends the process and that arrive from
// outside (a hang-up, an interrupt, a kill, a timer, a closed pipe, a file
// size limit). The faults (SIGSEGV, SIGBUS, ...) are left to their default
// and to the sanitizers. A signal the process was started ignoring (nohup's
// SIGHUP) stays ignored.
constexpr int kCleanupSignals[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF};

// Holds the cleanup signals back while alive: a temporary is created and its
// name recorded with no signal in between (one that came between mkstemp and
// the record left the file behind).
class SignalsHeld {
 public:
  SignalsHeld() {
    sigset_t held;
    sigemptyset(&held);
    for (int sig : kCleanupSignals) sigaddset(&held, sig);
    ::sigprocmask(SIG_BLOCK, &held, &before_);
  }
  ~SignalsHeld() { ::sigprocmask(SIG_SETMASK, &before_, nullptr); }
  SignalsHeld(const SignalsHeld&) = delete;
  SignalsHeld& operator=(const SignalsHeld&) = delete;

 private:
  sigset_t before_;
};

void install_cleanup_once() {
  static const bool installed = [] {
    for (int sig : kCleanupSignals) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
      struct sigaction on {};
      on.sa_handler = remove_temps_and_die;
      sigemptyset(&on.sa_mask);
      ::sigaction(sig, &on, nullptr);
    }
    return true;
  }();
  (void)installed;
}

// A temporary file next to its target; removed unless committed.
class TempFile {
 public:
  explicit TempFile(const std::string& target) : target_(target) {
    install_cleanup_once();
    const auto slash = target.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : target.substr(0, slash));
    const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
    path_ = dir + "/." + base + ".tmpXXXXXX";
    if (path_.size() >= kMaxPath) throw Error(target + ": path too long");
    const SignalsHeld held;
    for (slot_ = 0; slot_ < kMaxTemps; ++slot_) {
      bool expected = false;
      if (g_temp_used[slot_].compare_exchange_strong(expected, true)) break;
    }
    if (slot_ == kMaxTemps) throw Error(target + ": too many outputs at once");
    std::vector<char> name(path_.begin(), path_.end());
    name.push_back('\0');
    std::memcpy(g_temp_paths[slot_], name.data(), name.size());
    fd_ = ::mkstemp(name.data());
    if (fd_ < 0) {
      release();
      throw Error(target + ": cannot write file: " + std::strerror(errno));
    }
    path_.assign(name.data());
    std::memcpy(g_temp_paths[slot_], name.data(), name.size());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
    release();
  }

  // Streams the content into the temporary and closes it.
  void write(const std::function<void(std::FILE*, const std::string&)>& produce) {
    std::FILE* out = ::fdopen(fd_, "wb");
    if (!out) throw Error(target_ + ": cannot write file: " + std::strerror(errno));
    fd_ = -1;  // the stream owns it now
    struct Closer {
      std::FILE* f;
      ~Closer() {
        if (f) std::fclose(f);
      }
    } closer{out};
    produce(out, target_);
    if (std::fflush(out) != 0 || std::ferror(out)) throw Error(target_ + ": write failed: " + std::strerror(errno));
    // The temporary's mode: what a new file would get (mkstemp makes 0600).
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(::fileno(out), 0666 & ~mask);
    closer.f = nullptr;
    if (std::fclose(out) != 0) throw Error(target_ + ": write failed: " + std::strerror(errno));
  }
  void commit() {
    if (::rename(path_.c_str(), target_.c_str()) != 0) throw Error(target_ + ": cannot replace file: " + std::strerror(errno));
    committed_ = true;
  }

 private:
  std::string target_, path_;
  int fd_ = -1;
  int slot_ = 0;
  bool committed_ = false;
  void release() {
    if (slot_ < kMaxTemps) g_temp_used[slot_].store(false);
    slot_ = kMaxTemps;
  }
};

// An existing target must be a regular file (lstat: a symlink is refused,
// not followed).
void check_target(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return;  // absent: fine
  if (!S_ISREG(st.st_mode)) throw Error(path + ": refusing to replace " + kind_of(st.st_mode) + " (outputs replace regular files only)");
}

bool same_file(const std::string& a, const std::string& b) {
  if (a == b) return true;
  struct stat sa, sb;
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

std::string read_input(const std::string& path, std::uint64_t max_bytes, const ChunkCheck& check, std::string_view limit_name) {
  if (path == "-") {
    struct stat st;
    if (::fstat(STDIN_FILENO, &st) == 0) remember_input(st, "-");  // `< FILE`: an output must not replace FILE either
    return read_fd(STDIN_FILENO, "-", max_bytes, 0, check, limit_name);
  }
  // Non-blocking, so that opening a FIFO cannot hang before it is refused.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot open file: " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) throw Error(path + ": cannot open file: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw Error(path + ": " + kind_of(st.st_mode) + ", not a regular file");
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) too_large(path, max_bytes, limit_name);
  remember_input(st, path);
  return read_fd(fd, path, max_bytes, static_cast<std::uint64_t>(st.st_size), check, limit_name);
}

void check_outputs(const std::vector<std::string>& paths) {
  int to_stdout = 0;
  for (const std::string& p : paths) {
    if (p.empty()) throw OptionError("an output path is empty (give a file, or - for stdout)");
    to_stdout += p == "-";
  }
  if (to_stdout > 1) throw OptionError("-: stdout is given for " + std::to_string(to_stdout) + " outputs (at most one may go there)");
  for (std::size_t i = 0; i < paths.size(); ++i)
    for (std::size_t j = i + 1; j < paths.size(); ++j)
      if (paths[i] != "-" && same_file(paths[i], paths[j])) throw OptionError(paths[j] + ": the same path is given for two outputs");
  for (const std::string& p : paths) {
    if (p == "-") continue;
    struct stat st;
    if (::stat(p.c_str(), &st) != 0) continue;  // absent: no input is there
    for (const InputIdentity& in : inputs_read())
      if (in.dev == st.st_dev && in.ino == st.st_ino)
        throw OptionError(p + ": is an input of this command" + (in.path == p ? "" : " (" + in.path + ")") + "; refusing to replace it");
  }
}

void write_outputs(const std::vector<OutputStream>& outputs) {
  std::vector<std::string> paths;
  for (const auto& o : outputs) paths.push_back(o.path);
  check_outputs(paths);
  for (const auto& o : outputs)
    if (o.path != "-") check_target(o.path);
  // Every temporary complete before any rename: both or neither.
  std::vector<std::unique_ptr<TempFile>> temps;
  for (const auto& o : outputs) {
    if (o.path == "-") {
      temps.emplace_back();
      continue;
    }
    temps.push_back(std::make_unique<TempFile>(o.path));
    temps.back()->write(o.write);
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].path == "-") {
      std::cout.flush();
      outputs[i].write(stdout, "-");
      std::fflush(stdout);
    } else {
      temps[i]->commit();
    }
  }
}

namespace {
void write_text(std::FILE* out, const std::string& name, std::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), out) != text.size()) throw Error(name + ": write failed: " + std::strerror(errno));
}
}  // namespace

OutputStream text_output(std::string path, std::string text) {
  return {std::move(path), [text = std::move(text)](std::FILE* out, const std::string& name) { write_text(out, name, text); }};
}

void write_outputs(const std::vector<OutputText>& outputs) {
  std::vector<OutputStream> streams;
  streams.reserve(outputs.size());
  for (const auto& o : outputs)  // the texts outlive the call: no copies
    streams.push_back({o.path, [&text = o.text](std::FILE* out, const std::string& name) { write_text(out, name, text); }});
  write_outputs(streams);
}

// The text is written from where it is: a copy of a fused 300k-node graph
// (100 MB) cost more than writing it.
void write_output(const std::string& path, const std::string& text) {
  write_outputs(std::vector<OutputStream>{{path, [&text](std::FILE* out, const std::string& name) { write_text(out, name, text); }}});
}

}  // namespace schedlab
