// core/measure — estimated against measured, per graph and per kernel class
// (the `accuracy` command; docs/cost-model.md, "Accuracy").
//
// Contract: for every measured case, `predict` (core/predict) runs on the
// graph's own order (the post graph's node order is the order Inductor's
// code runs) with the measured data-dependent sizes, and its figures stand
// beside the measured ones. Per class, the calibrated time of every node of
// the class is summed against the measured kernels mapped to those nodes.
// The reserved peak is the measured reserved memory before the call (the
// process's other tensors' segments, which the graph cannot know) plus
// what the allocator simulation grows by during the call. When the file
// recorded the allocator's state at the call's start, the allocated and
// reserved peaks are replayed from that state instead (recorded_start).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/cost/cost_model.h"
#include "core/measure/fit.h"

namespace schedlab {

struct GraphAccuracy {
  std::string graph, path;
  double kernel_est_us = 0, kernel_meas_us = 0;
  double wall_est_us = 0, wall_meas_us = 0;
  double wall_cudagraphs_est_us = 0;
  std::optional<double> wall_cudagraphs_meas_us;
  std::int64_t peak_est = 0, peak_meas = 0, reserved_est = 0, reserved_meas = 0;
  bool data_dependent = false;  // the measurement observed data-dependent sizes
  bool recorded_start = false;  // peak and reserved replayed from the file's recorded allocator state (else the cold start)
  // The measuring host's probe over the profile's (core/cost/time_model.h
  // at_host_speed): the factor the wall's host costs were priced at; 1 when
  // either is unknown or the report holds the host at the profile's speed.
  double host_speed_factor = 1;
};

struct ClassAccuracy {
  KernelClass cls = KernelClass::None;  // the finest class (classify_kernel): indexing, depthwise_convolution_native, ...
  KernelClass law = KernelClass::None;  // the class whose law priced it (cls, or its law parent where the profile has no law of cls)
  double est_us = 0, meas_us = 0;
  int nodes = 0;
};

// One node with measured kernels: where a graph's error comes from.
struct NodeAccuracy {
  std::string graph, node;
  KernelClass cls = KernelClass::None;
  int kernels = 0;              // measured kernels mapped to it
  double est_us = 0, meas_us = 0;
  std::string first_kernel;     // the first of them, by name
};

struct AccuracyReport {
  std::string hardware;
  std::vector<GraphAccuracy> graphs;
  std::vector<ClassAccuracy> classes;  // classes with measured kernels, in enum order
  std::vector<NodeAccuracy> nodes;     // every node with measured kernels, graph by graph
};

// `collectives_measured` false (the checked-in zoo: distributed graphs ran on
// one GPU with the fake process group, whose collectives move nothing):
// per-graph kernel and wall times leave collectives out on both sides, and
// the collective class is not compared.
// `at_measured_host_speed` (the default): each graph's host costs are the
// profile's restated at the speed its file's host probe recorded
// (core/cost/time_model.h at_host_speed), so that a wall measured on a
// slower or faster host is compared with what that host would take; false
// prices every graph's host at the profile's speed.
AccuracyReport measure_accuracy(const std::vector<MeasuredCase>& cases, const HardwareProfile& hw, bool collectives_measured = true,
                                bool at_measured_host_speed = true);

// The report's classes summed into their base classes (kernel_class.h
// base_class: the first eleven), in enum order: the figures the report gave
// before the finer classes.
std::vector<ClassAccuracy> base_class_totals(const AccuracyReport& r);

// |est/meas - 1| over the graphs: median and worst, for one figure.
struct ErrorSummary {
  double median = 0, worst = 0;
};
ErrorSummary kernel_time_error(const AccuracyReport& r);
ErrorSummary wall_time_error(const AccuracyReport& r);

std::string accuracy_to_text(const AccuracyReport& r);
// The nodes as tab-separated values with a header line (graph, node, class,
// kernels, measured_us, estimated_us, ratio, first_kernel).
std::string accuracy_nodes_tsv(const AccuracyReport& r);
// Per measured graph, memory as executed event by event, as the accuracy
// report replays it (the order the call ran; from the recorded start where
// the file has one): [action, buffer, node, bytes, block address, block
// bytes, allocated after, reserved after], action "a" allocate, "f" free,
// "r" reuse (its buffer takes over the donor's storage: [r, buffer, node,
// donor, ...]); a kernel's workspace is the buffer "". For comparing with a
// measured call's allocator history (scripts/memory_events_diff.py).
std::string memory_events_json(const std::vector<MeasuredCase>& cases);

// A self-contained SVG: estimated against measured on log axes (kernel time
// and wall time per graph, time per class), the diagonal and a ±10 % band.
std::string accuracy_svg(const AccuracyReport& r);

}  // namespace schedlab
