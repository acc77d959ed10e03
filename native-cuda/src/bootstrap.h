// native-cuda/src — the rendezvous of a multi-process run (one process per
// GPU): rank 0 makes the NCCL unique id and hands it to the others, and at
// the end gathers their reports. Two ways (native-cuda/host/launch.h):
//   launcher  a TCP star around rank 0 at MASTER_ADDR:bootstrap_port (torchrun's
//             own store holds MASTER_PORT); the reports come back over it, so
//             the ranks need no shared file system
//   id file   rank 0 writes the id (hex) to a file the others poll for; the
//             reports are files next to the merged one (a shared file system);
//             rank 0 removes the id file once every rank has reported
#pragma once

#include <string>
#include <vector>

#include "native-cuda/host/launch.h"

namespace schedlab::gpu {

constexpr std::size_t kNcclIdBytes = 128;

class Rendezvous {
 public:
  // Blocks until every rank has joined (kJoinTimeoutS at most). `root_id`:
  // the NCCL id, made by rank 0 (ignored on the others). Throws Error.
  Rendezvous(const LaunchEnv& env, std::string id_file, std::vector<std::uint8_t> root_id);
  ~Rendezvous();
  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;

  const std::vector<std::uint8_t>& nccl_id() const { return id_; }
  // The first 16 bytes of the NCCL id as hex: names this run in the reports,
  // so that rank 0 never takes a report an earlier run left behind.
  std::string run_id() const;
  // Rank 0 gets every rank's text (index = rank), the others send theirs and
  // get nothing. Id-file mode: each rank has already written its text
  // (holding run_id()) to files[rank]; rank 0 waits for and reads those
  // files, then removes the id file.
  std::vector<std::string> gather(const std::string& mine, const std::vector<std::string>& files);

  static constexpr int kJoinTimeoutS = 120;

 private:
  LaunchEnv env_;
  std::string id_file_;
  std::vector<std::uint8_t> id_;
  std::vector<int> sockets_;  // rank 0: one per rank (index = rank; -1 for itself); others: [the one to rank 0]
};

}  // namespace schedlab::gpu
