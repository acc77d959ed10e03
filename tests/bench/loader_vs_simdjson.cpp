// Loader throughput beside Debian's simdjson, on the same file (issue 9's
// figure). Built only when libsimdjson-dev is installed, and only for this
// comparison: simdjson is never a dependency of core/ (one parser, core/io's
// tape, serves the native and WASM builds).
//
//   schedlab_loader_bench GRAPH.json [--repeat N]
//
// Prints `bench:` lines (best of N in CPU time, MB/s of JSON text): simdjson's DOM parse,
// core/io's tape parse (JsonDoc), and the whole loader (tape + Graph +
// validate), and the ratios. Nothing is asserted.
#include <simdjson.h>

#include <algorithm>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "core/io/files.h"
#include "core/io/graph_reader.h"
#include "core/io/json_doc.h"

namespace {

// CPU seconds of this process (user + system, page faults included), not
// wall time: on a shared, loaded machine wall time mostly measured the wait
// for a core, and one CI run's ratio came out 4.5x where quiet runs gave 2.6x.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

double best_seconds(int repeat, const std::function<void()>& fn) {
  double best = 1e300;
  for (int i = 0; i < repeat; ++i) {
    const double t0 = cpu_seconds();
    fn();
    best = std::min(best, cpu_seconds() - t0);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: schedlab_loader_bench GRAPH.json [--repeat N]\n");
    return 2;
  }
  const std::string path = argv[1];
  const int repeat = argc >= 4 && std::string(argv[2]) == "--repeat" ? std::max(1, std::atoi(argv[3])) : 5;
  const std::string text = schedlab::read_input(path);
  const double mb = text.size() / 1e6;

  simdjson::dom::parser parser;
  const simdjson::padded_string padded(text);
  const double simd_s = best_seconds(repeat, [&] {
    simdjson::dom::element root;
    if (parser.parse(padded).get(root)) {
      std::fprintf(stderr, "%s: simdjson refused the file\n", path.c_str());
      std::exit(1);
    }
  });
  // A parser made for each parse, as a program that loads one graph has:
  // its buffers are allocated and first touched inside the timing.
  const double simd_fresh_s = best_seconds(repeat, [&] {
    simdjson::dom::parser fresh;
    simdjson::dom::element root;
    if (fresh.parse(padded).get(root)) std::exit(1);
  });
  const double tape_s = best_seconds(repeat, [&] { (void)schedlab::JsonDoc::parse(text, 64); });
  std::size_t nodes = 0;
  const double load_s = best_seconds(repeat, [&] { nodes = schedlab::load_graph(text).nodes.size(); });

  std::printf("bench: loader %s: %.1f MB, %zu nodes, best of %d\n", path.c_str(), mb, nodes, repeat);
  std::printf("bench:   simdjson DOM parse      %8.1f ms  %7.0f MB/s\n", simd_s * 1e3, mb / simd_s);
  std::printf("bench:   simdjson, fresh parser  %8.1f ms  %7.0f MB/s\n", simd_fresh_s * 1e3, mb / simd_fresh_s);
  std::printf("bench:   core/io tape parse      %8.1f ms  %7.0f MB/s  (%.2fx simdjson's time, %.2fx with a fresh parser)\n", tape_s * 1e3,
              mb / tape_s, tape_s / simd_s, tape_s / simd_fresh_s);
  std::printf("bench:   load_graph (whole)      %8.1f ms  %7.0f MB/s  (%.2fx simdjson's time)\n", load_s * 1e3, mb / load_s, load_s / simd_s);
  return 0;
}
