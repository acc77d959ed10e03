// core/io — the reports schedlab writes: schedplan/1 plans
// (docs/schedplan-1.md), Chrome traces of a simulation, hardware profiles.
//
// Contract: each writer reads plain structs (PlanResult, Simulation,
// HardwareProfile) and streams compact JSON through a JsonWriter; nothing is
// recomputed here. Object keys come out sorted, as plans always had them.
// The CLI and the WASM module call the same functions, so their outputs are
// byte for byte the same.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "core/io/json_writer.h"
#include "core/plan/plan.h"

namespace schedlab {

// Names come from r.planned() (the front end's from r.input).
void write_plan(JsonWriter& w, const PlanOptions& opts, const PlanResult& r);
// The plan's `final` section (the final order's peak, step and node) and
// its `predicted` section, each as its own JSON text: the WASM module's first
// report takes them from here, so that they are the plan's bytes.
std::string final_section_json(const PlanResult& r);
std::string prediction_section_json(const Prediction& p);
// schedplan/1 `compare` alone (the compared comm passes' rows), for the page's first report.
std::string compare_section_json(const std::vector<ComparedPasses>& compared);
// schedplan/1 `device_fit` alone (the page's overview).
std::string device_fit_section_json(const DeviceFit& f);
// The whole plan as one newline-ended line.
std::string plan_text_json(const PlanOptions& opts, const PlanResult& r);
// The same bytes, streamed into `out` as they are produced (a 1M-node plan
// is never one string); a failed write throws Error naming `name`.
void stream_plan_json(std::FILE* out, const std::string& name, const PlanOptions& opts, const PlanResult& r);

// The simulation as Chrome trace events (Perfetto, chrome://tracing): one
// process, lanes "compute" and "comm", one complete event per node, one
// "exposed" event per stall; args carry kinds, kernels and buffer sizes.
// With `memory_curve` (the n+1 entries of the simulated order, as
// estimate_peak_memory gives them), after those events comes what Perfetto
// users expect beside the slices: a "memory" counter track (a step's sample
// at its node's start, or its issue for a collective) and one flow (ph "s"
// -> "f") from each collective to the node that waited on it.
void write_chrome_trace(JsonWriter& w, const Graph& g, const Simulation& sim, const std::vector<std::int64_t>* memory_curve = nullptr);
std::string chrome_trace_json(const Graph& g, const Simulation& sim);
std::string chrome_trace_json(const Graph& g, const Simulation& sim, const std::vector<std::int64_t>& memory_curve);

// Several ranks (core/sim/ranks.h) as Chrome trace events: one process per
// rank ("rank N <graph>"), each with the lanes above.
std::string ranks_chrome_trace_json(const PlanRanks& ranks);
// `simulate --format json`, and a plan's `simulation.ranks`: per rank its
// step, exposed comm, compute factor, graph name and label, the slowest
// rank, and per collective (rank 0's node name) its arrival skew;
// docs/simulation.md, "Several ranks".
std::string ranks_json(const PlanRanks& ranks);

// What `plan --trace` writes and the page exports: the final order's
// simulation with its memory track and flows.
std::string plan_trace_json(const PlanResult& r);
void stream_plan_trace_json(std::FILE* out, const std::string& name, const PlanResult& r);

// The comm knobs as the plan's options.comm writes them (null: no limit).
std::string comm_knobs_json(const CommKnobs& knobs);

// A profile (no time model) in the form parse_hardware_profile (profiles.h) reads back.
std::string hardware_profile_json(const HardwareProfile& hw);

// Whole pipeline on text: read the options and the graph, plan, write.
std::string plan_json(std::string_view graph_json, std::string_view options_json);

}  // namespace schedlab
