// pybind/ — the Python face of core/ (the module schedlab._core, wrapped by
// python/schedlab): a front end like the CLI and the WASM module, nothing
// more. plan() reads its options with core/io's options reader, runs the one
// pipeline (run_plan) and writes the plan with core/io's plan writer; the
// graph comes in and the plan goes out as Python objects, handed value by
// value to a JsonDocBuilder and received from a JsonWriter as JsonEvents, so
// no JSON text is written or parsed in between. The dict plan() returns is
// the schedplan/1 document `schedlab plan G -o PLAN.json` writes, value for
// value (what json.load of that file gives).
//
// Errors: what the CLI exits 1 for raises schedlab.Error (a ValueError), a
// bad option schedlab.OptionError (a subclass; the CLI's exit 2), with the
// CLI's message (a place named: `graph.nodes[3].flops: ...`,
// `options.comm.x: ...`, `PATH: nodes[2] "op2": ...`). Out of memory is
// MemoryError.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/comms/passes.h"
#include "core/cost/cost_model.h"
#include "core/cost/pricing.h"
#include "core/io/files.h"
#include "core/io/graph_reader.h"
#include "core/io/json_doc.h"
#include "core/io/json_writer.h"
#include "core/io/options.h"
#include "core/io/plan_writer.h"
#include "core/io/profiles.h"
#include "core/memory/methods.h"
#include "core/plan/plan.h"
#include "core/util/error.h"

namespace py = pybind11;

namespace schedlab::python {
namespace {

// A Python value (dicts, lists, tuples, str, int, float, bool, None: what
// json.dumps takes) handed to `b`; anything else is refused naming its
// place, with the error type E (Error for a graph, OptionError for options).
template <class E>
class DocumentReader {
 public:
  explicit DocumentReader(JsonDocBuilder& b) : b_(b) {}

  void read(py::handle v, std::string& place) {
    if (v.is_none()) {
      b_.null();
    } else if (py::isinstance<py::bool_>(v)) {
      b_.boolean(v.cast<bool>());
    } else if (py::isinstance<py::int_>(v)) {
      read_int(v, place);
    } else if (py::isinstance<py::float_>(v)) {
      const double d = v.cast<double>();
      if (!std::isfinite(d)) fail(place, py::repr(v).cast<std::string>() + " is no JSON number");
      b_.number(d);
    } else if (py::isinstance<py::str>(v)) {
      Py_ssize_t n = 0;
      const char* s = PyUnicode_AsUTF8AndSize(v.ptr(), &n);
      if (!s) {
        PyErr_Clear();
        fail(place, "a string that is not valid Unicode (a lone surrogate?)");
      }
      b_.string(std::string_view(s, static_cast<std::size_t>(n)));
    } else if (py::isinstance<py::dict>(v)) {
      guard_depth(place);
      b_.begin_object();
      for (auto item : py::reinterpret_borrow<py::dict>(v)) {
        if (!py::isinstance<py::str>(item.first)) fail(place, "key " + py::repr(item.first).cast<std::string>() + " is not a string");
        const std::string key = item.first.cast<std::string>();
        b_.key(key);
        const std::size_t at = place.size();
        place += "." + key;
        read(item.second, place);
        place.resize(at);
      }
      b_.end();
      --depth_;
    } else if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
      guard_depth(place);
      b_.begin_array();
      std::size_t i = 0;
      for (py::handle item : v) {
        const std::size_t at = place.size();
        place += "[" + std::to_string(i++) + "]";
        read(item, place);
        place.resize(at);
      }
      b_.end();
      --depth_;
    } else {
      fail(place, "a " + py::str(py::type::handle_of(v).attr("__name__")).cast<std::string>() +
                      " is no JSON value (dicts, lists, tuples, str, int, float, bool and None are)");
    }
  }

 private:
  JsonDocBuilder& b_;
  int depth_ = 0;

  [[noreturn]] static void fail(const std::string& place, const std::string& what) { throw E(place + ": " + what); }

  // The builder refuses deep nesting too; here the place is named (and a
  // dict that contains itself ends here).
  void guard_depth(const std::string& place) {
    if (++depth_ > kMaxJsonDepth) fail(place, "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }

  // As the parser keeps integers: int64 exactly, larger ones as numbers.
  void read_int(py::handle v, const std::string& place) {
    int overflow = 0;
    const long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
    if (overflow == 0) {
      if (x == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        fail(place, "an integer that cannot be read");
      }
      b_.integer(x);
      return;
    }
    const double d = PyLong_AsDouble(v.ptr());
    if (d == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      fail(place, "an integer too large for a JSON number");
    }
    b_.number(d, true);
  }
};

template <class E>
JsonDoc document_of(py::handle value, std::string place) {
  JsonDocBuilder b(kMaxJsonDepth);
  DocumentReader<E>(b).read(value, place);
  return b.finish();
}

// What the plan writer writes, as Python objects: one stack of open
// containers, each value put into the innermost.
class PythonObjects : public JsonEvents {
 public:
  py::object result() { return std::move(root_); }

  void begin_object() override { open(py::dict()); }
  void end_object() override { close(); }
  void begin_array() override { open(py::list()); }
  void end_array() override { close(); }
  void key(std::string_view k) override { key_ = text(k); }
  void string(std::string_view s) override { put(text(s)); }
  void boolean(bool b) override { put(py::bool_(b)); }
  void number(double d) override { put(py::float_(d)); }
  void integer(std::int64_t v) override { put(py::int_(v)); }
  void unsigned_integer(std::uint64_t v) override { put(py::int_(v)); }
  void null() override { put(py::none()); }

 private:
  std::vector<py::object> open_;
  py::object key_, root_;

  // Names the loader accepted are UTF-8; the writer's guard for anything
  // else (U+FFFD) is the decoder's "replace".
  static py::object text(std::string_view s) {
    PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
    if (!o) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(o);
  }

  void put(py::object v) {
    if (open_.empty()) {
      root_ = std::move(v);
    } else if (PyDict_Check(open_.back().ptr())) {
      if (PyDict_SetItem(open_.back().ptr(), key_.ptr(), v.ptr()) != 0) throw py::error_already_set();
    } else if (PyList_Append(open_.back().ptr(), v.ptr()) != 0) {
      throw py::error_already_set();
    }
  }
  void open(py::object container) {
    put(container);
    open_.push_back(std::move(container));
  }
  void close() { open_.pop_back(); }
};

// graph: a dict (schedgraph/1) or a path (str or os.PathLike, "-" for stdin),
// read under the CLI's input rules.
std::shared_ptr<const Graph> graph_of(py::handle graph) {
  if (py::isinstance<py::dict>(graph)) {
    JsonDoc doc = document_of<Error>(graph, "graph");
    return std::make_shared<const Graph>(read_graph(doc.root()));
  }
  const py::object fspath = py::module_::import("os").attr("fspath");
  py::object path;
  try {
    path = fspath(graph);
  } catch (py::error_already_set&) {
    throw Error("graph: expected a schedgraph/1 dict or a file path, got a " +
                py::str(py::type::handle_of(graph).attr("__name__")).cast<std::string>());
  }
  if (!py::isinstance<py::str>(path)) throw Error("graph: a path given as bytes; give it as str");
  const std::string file = path.cast<std::string>();
  py::gil_scoped_release unlocked;
  return std::make_shared<const Graph>(load_graph_file(file));
}

// options: what parse_plan_options reads (the WASM API's options), as a
// dict; hardware: `--hardware NAME|FILE` (a built-in name or a profile
// file), over the options' own.
PlanOptions options_of(py::handle options, py::handle hardware) {
  PlanOptions opts;
  if (!options.is_none()) {
    if (!py::isinstance<py::dict>(options)) throw OptionError("options: expected a dict");
    JsonDoc doc = document_of<OptionError>(options, "options");
    opts = parse_plan_options(doc.root());
  }
  if (!hardware.is_none()) {
    const py::object fspath = py::module_::import("os").attr("fspath");
    py::object name;
    try {
      name = fspath(hardware);
    } catch (py::error_already_set&) {
      throw OptionError("hardware: expected a built-in profile name or a profile file path");
    }
    if (!py::isinstance<py::str>(name)) throw OptionError("hardware: a path given as bytes; give it as str");
    opts.hardware = load_hardware_profile(name.cast<std::string>());
  }
  return opts;
}

py::object plan(py::handle graph, py::handle options, py::handle hardware) {
  const PlanOptions opts = options_of(options, hardware);
  std::shared_ptr<const Graph> input = graph_of(graph);
  std::optional<PlanResult> result;
  {
    py::gil_scoped_release unlocked;
    result.emplace(run_plan(std::move(input), opts));
  }
  PythonObjects objects;
  JsonWriter w(objects);
  write_plan(w, opts, *result);
  return objects.result();
}

// A graph priced once (core/cost's price_graph), per node in the graph's
// order: what the calibrated model gives (calibrated_us: the fitted laws,
// collectives by the profile's measured curves where it has them), what the
// comm passes read (pass_us, pass_sources) and each node's kernel class. For
// callers that time nodes themselves (python/schedlab_export/fx_estimator.py,
// Inductor's FX overlap scheduler): the numbers a plan simulates with.
py::dict price(py::handle graph, py::handle hardware) {
  const PlanOptions opts = options_of(py::none(), hardware);
  const std::shared_ptr<const Graph> g = graph_of(graph);
  std::optional<Pricing> p;
  {
    py::gil_scoped_release unlocked;
    p.emplace(price_graph(*g, opts.hardware));
  }
  py::list names, classes, sources;
  for (NodeId v = 0; v < g->num_nodes(); ++v) {
    names.append(g->nodes[v].name);
    classes.append(std::string(to_string(p->kernel_classes[v])));
    sources.append(std::string(p->pass_sources[v]));
  }
  py::dict out;
  out["hardware"] = p->hardware;
  out["model"] = p->model;
  out["nodes"] = names;
  out["calibrated_us"] = p->calibrated_us;
  out["pass_us"] = p->pass_us;
  out["pass_sources"] = sources;
  out["classes"] = classes;
  return out;
}

// The counts `schedlab validate` prints.
py::dict validate(py::handle graph) {
  const std::shared_ptr<const Graph> g = graph_of(graph);
  std::size_t reads = 0;
  for (const auto& n : g->nodes) reads += n.reads.size();
  py::dict out;
  out["graph"] = g->name;
  out["nodes"] = g->num_nodes();
  out["buffers"] = g->num_buffers() - g->num_inputs;
  out["inputs"] = g->num_inputs;
  out["reads"] = reads;
  out["outputs"] = g->outputs.size();
  out["fused"] = !g->is_pre_fusion();
  return out;
}

py::list registry_table(bool memory) {
  py::list out;
  const std::vector<std::string> defaults = default_memory_methods();
  auto row = [&](std::string_view name, std::string_view summary, bool is_default) {
    py::dict d;
    d["name"] = std::string(name);
    d["summary"] = std::string(summary);
    d["default"] = is_default;
    out.append(d);
  };
  if (memory) {
    for (const auto& m : memory_methods()) row(m.name, m.summary, std::find(defaults.begin(), defaults.end(), m.name) != defaults.end());
  } else {
    for (const auto& p : comm_passes()) row(p.name, p.summary, false);
  }
  return out;
}

}  // namespace
}  // namespace schedlab::python

PYBIND11_MODULE(_core, m) {
  using namespace schedlab;
  m.doc() = "schedlab's core in-process (pybind/module.cpp); use it through the schedlab package.";
  static py::exception<Error> error(m, "Error", PyExc_ValueError);
  static py::exception<OptionError> option_error(m, "OptionError", error.ptr());
  // Translators run newest first: the subclass before its base.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const OptionError& e) {
      PyErr_SetString(option_error.ptr(), e.what());
    } catch (const Error& e) {
      PyErr_SetString(error.ptr(), e.what());
    }
  });
  m.def("plan", &python::plan, py::arg("graph"), py::arg("options") = py::none(), py::arg("hardware") = py::none(),
        "The schedplan/1 plan of a graph (a dict or a file path) as Python objects.");
  m.def("price", &python::price, py::arg("graph"), py::arg("hardware") = py::none(),
        "Per-node times of a graph (a dict or a file path) on a hardware profile: price_graph's calibrated_us, "
        "pass_us, pass_sources and kernel classes, in node order.");
  m.def("validate", &python::validate, py::arg("graph"), "`schedlab validate`'s counts of a graph (a dict or a file path).");
  m.def("memory_methods", [] { return python::registry_table(true); }, "[{name, summary, default}] of core/memory's registry.");
  m.def("comm_passes", [] { return python::registry_table(false); }, "[{name, summary, default}] of core/comms' registry.");
  m.def("hardware_profiles", &builtin_profile_names, "The built-in hardware profiles' names.");
  m.attr("default_hardware") = std::string(kDefaultHardwareProfile);
}
