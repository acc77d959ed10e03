#include "native-cuda/src/bootstrap.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/io/files.h"
#include "core/util/error.h"

namespace schedlab::gpu {
namespace {

using Clock = std::chrono::steady_clock;

void send_all(int fd, const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k <= 0) throw Error(std::string("rendezvous: send failed: ") + std::strerror(errno));
    p += k;
    n -= static_cast<std::size_t>(k);
  }
}

void recv_all(int fd, void* data, std::size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t k = ::recv(fd, p, n, 0);
    if (k <= 0) throw Error("rendezvous: a rank closed its connection early");
    p += k;
    n -= static_cast<std::size_t>(k);
  }
}

void send_text(int fd, const std::string& s) {
  const std::uint64_t n = s.size();
  send_all(fd, &n, sizeof n);
  send_all(fd, s.data(), s.size());
}

std::string recv_text(int fd) {
  std::uint64_t n = 0;
  recv_all(fd, &n, sizeof n);
  std::string s(n, '\0');
  recv_all(fd, s.data(), n);
  return s;
}

int listen_on(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw Error(std::string("rendezvous: socket: ") + std::strerror(errno));
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 1024) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    throw Error("rendezvous: cannot listen on port " + std::to_string(port) + ": " + why +
                " (set SCHEDLAB_BOOTSTRAP_PORT to a free port)");
  }
  return fd;
}

int connect_to(const std::string& host, int port, int timeout_s) {
  const auto deadline = Clock::now() + std::chrono::seconds(timeout_s);
  while (true) {
    addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) == 0) {
      const int fd = ::socket(res->ai_family, res->ai_socktype, res->ai_protocol);
      const bool ok = fd >= 0 && ::connect(fd, res->ai_addr, res->ai_addrlen) == 0;
      ::freeaddrinfo(res);
      if (ok) return fd;
      if (fd >= 0) ::close(fd);
    }
    if (Clock::now() > deadline)
      throw Error("rendezvous: rank 0 at " + host + ":" + std::to_string(port) + " did not answer in " +
                  std::to_string(timeout_s) + " s");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// The file's text once it exists and holds `token` (a file left by an
// earlier run does not).
std::string wait_for_file(const std::string& path, int timeout_s, const std::string& token = "") {
  const auto deadline = Clock::now() + std::chrono::seconds(timeout_s);
  while (true) {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream s;
      s << in.rdbuf();
      if (s.str().find(token) != std::string::npos) return s.str();
    }
    if (Clock::now() > deadline)
      throw Error("rendezvous: " + path + " did not appear" + (token.empty() ? "" : " for this run") + " in " +
                  std::to_string(timeout_s) + " s");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

Rendezvous::Rendezvous(const LaunchEnv& env, std::string id_file, std::vector<std::uint8_t> root_id)
    : env_(env), id_file_(std::move(id_file)) {
  if (env_.rank == 0) id_ = std::move(root_id);
  if (!id_file_.empty()) {
    // The file appears whole (write_output renames a finished temporary).
    if (env_.rank == 0) write_output(id_file_, encode_unique_id(id_) + "\n");
    else id_ = decode_unique_id(wait_for_file(id_file_, kJoinTimeoutS), kNcclIdBytes);
    return;
  }
  if (env_.rank == 0) {
    const int listener = listen_on(env_.bootstrap_port);
    sockets_.assign(env_.world_size, -1);
    for (int joined = 1; joined < env_.world_size; ++joined) {
      const int fd = ::accept(listener, nullptr, nullptr);
      if (fd < 0) {
        ::close(listener);
        throw Error(std::string("rendezvous: accept: ") + std::strerror(errno));
      }
      std::int32_t rank = -1;
      recv_all(fd, &rank, sizeof rank);
      if (rank <= 0 || rank >= env_.world_size || sockets_[rank] != -1) {
        ::close(fd);
        ::close(listener);
        throw Error("rendezvous: a process joined as rank " + std::to_string(rank) + " twice or out of range");
      }
      sockets_[rank] = fd;
      send_all(fd, id_.data(), id_.size());
    }
    ::close(listener);
  } else {
    const int fd = connect_to(env_.master_addr, env_.bootstrap_port, kJoinTimeoutS);
    sockets_.push_back(fd);
    const std::int32_t rank = env_.rank;
    send_all(fd, &rank, sizeof rank);
    id_.resize(kNcclIdBytes);
    recv_all(fd, id_.data(), id_.size());
  }
}

std::string Rendezvous::run_id() const { return encode_unique_id(std::vector<std::uint8_t>(id_.begin(), id_.begin() + 16)); }

Rendezvous::~Rendezvous() {
  for (int fd : sockets_)
    if (fd >= 0) ::close(fd);
}

std::vector<std::string> Rendezvous::gather(const std::string& mine, const std::vector<std::string>& files) {
  if (!id_file_.empty()) {
    if (env_.rank != 0) return {};
    std::vector<std::string> all(env_.world_size);
    all[0] = mine;
    for (int r = 1; r < env_.world_size; ++r) all[r] = wait_for_file(files.at(r), kJoinTimeoutS, run_id());
    std::remove(id_file_.c_str());  // every rank has read it (they all reported): the next run starts clean
    return all;
  }
  if (env_.rank != 0) {
    send_text(sockets_.at(0), mine);
    return {};
  }
  std::vector<std::string> all(env_.world_size);
  all[0] = mine;
  for (int r = 1; r < env_.world_size; ++r) all[r] = recv_text(sockets_[r]);
  return all;
}

}  // namespace schedlab::gpu
