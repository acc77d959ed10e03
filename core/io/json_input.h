// core/io — the reader policy every JSON input follows (graphs, hardware
// profiles, measured files, options, plans):
//
// - a size limit per kind of file, applied to stdin as it is read as well as
//   to a file before it is read (kMaxProfileBytes, kMaxMeasuredBytes; graphs
//   take `--max-input-bytes`);
// - a nesting limit (kMaxJsonDepth), checked as the text is read, so that
//   20 MB of `[` is refused at the 65th byte instead of being parsed;
// - a byte JSON never holds outside whitespace (a NUL, a control character:
//   `/dev/zero` on stdin) refused in the chunk it arrives in;
// - every message one line, starting with the file (`-` for stdin) and the
//   place: `p.json: not valid JSON: line 1, column 65: nested deeper than 64
//   levels`, then the reader's `p.json: time_model.laws.gemm.fixed_us: ...`;
//   names taken from the file are quoted by quoted_name and keys placed by
//   member_place (core/graph/builder.h).
//
// The checks also run over text already in memory (check_json_text), for
// the WASM API and the fuzzers, before any parser sees it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace schedlab {

inline constexpr int kMaxJsonDepth = 64;
// A fitted profile is 10 KB; a measured file of 200k kernels about 40 MB.
inline constexpr std::uint64_t kMaxProfileBytes = std::uint64_t{16} << 20;
inline constexpr std::uint64_t kMaxMeasuredBytes = std::uint64_t{256} << 20;

// PATH or "-" under the input rules of core/io/files.h and the checks
// above. Throws Error "PATH: ...".
// `limit_name`: what sets the limit, for the message.
std::string read_json_input(const std::string& path, std::uint64_t max_bytes, std::string_view limit_name = "--max-input-bytes",
                            int max_depth = kMaxJsonDepth);

// The same checks over whole text. Throws Error "not valid JSON: line L,
// column C: ..." (without a file: the caller prefixes it).
void check_json_text(std::string_view text, int max_depth = kMaxJsonDepth);

// check_json_text, then nlohmann's parse: the readers' one way from text to
// a document. Throws Error "WHERE: not valid JSON: ..." naming `where`.
nlohmann::json parse_json_text(std::string_view text, const std::string& where);

}  // namespace schedlab
