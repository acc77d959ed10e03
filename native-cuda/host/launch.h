// native-cuda/host — how one schedlab-gpu process finds its place among the
// ranks of a multi-process run, and how rank 0 merges the ranks' reports.
// GPU-free (tested in tests/gpu); native-cuda/src/bootstrap.* does the
// sockets, files and NCCL calls.
//
// A process is one rank of several when the launcher's environment says so
// (torchrun sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) or
// when --nccl-id-file names a file through which rank 0 hands the NCCL
// unique id to the others (then MASTER_* are not needed).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace schedlab::gpu {

struct LaunchEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;              // the GPU this process drives
  std::string master_addr;         // rank 0's host: it serves the NCCL id and gathers the reports
  int master_port = 0;             // torchrun's own store listens here
  int bootstrap_port = 0;          // schedlab-gpu's rendezvous: master_port + 1 unless given
};

// Reads the launcher's variables through `get` (std::getenv in the binary).
// None when WORLD_SIZE is unset (single-process mode). Throws OptionError
// naming the variable when one is malformed, missing or inconsistent
// (RANK >= WORLD_SIZE, say). `need_master`: MASTER_ADDR and MASTER_PORT are
// required (not with an id file).
std::optional<LaunchEnv> launch_env_from(const std::function<const char*(const char*)>& get, bool need_master);

// The NCCL unique id (128 opaque bytes) as hex text for a file, and back.
// decode_unique_id throws Error unless the text is exactly `bytes` bytes of hex.
std::string encode_unique_id(const std::vector<std::uint8_t>& id);
std::vector<std::uint8_t> decode_unique_id(const std::string& text, std::size_t bytes);

// Where rank r writes its own report next to the merged one: REPORT.rank<r>.json.
std::string rank_report_path(const std::string& merged_path, int rank);

// Rank 0's merge of every rank's schedlab-gpu-run/1 report (index = rank):
// rank 0's report, plus per node the measured time on every rank
// (`measured_us_by_rank`, `measured_us_max`), per rank its wall time and
// memory (`ranks`), and `totals.measured_wall_us_max` (the step ends when the
// slowest rank does). Throws Error when the reports are of different graphs
// or node lists.
nlohmann::json merge_rank_reports(const std::vector<nlohmann::json>& reports);

}  // namespace schedlab::gpu
