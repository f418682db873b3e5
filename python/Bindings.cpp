// The compiled core of the `tilescope` Python package (pybind11). Converts
// Python arguments to the plain C++ of Api.h, releases the GIL for the work
// itself (so several Python threads evaluate candidates at once), and turns
// results into dicts (by parsing the JSON each call produces, so a dict here
// is exactly what the command line prints) and numpy arrays. ApiError becomes
// the tilescope.Error subclass of its kind (python/tilescope/_errors.py).
#include "python/Api.h"

#include "ir/Printer.h"

#include "reward/Reward.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;
using namespace pybind11::literals;
using namespace tilescope;
using namespace tilescope::python;

namespace {

py::object loads(const std::string &text) {
  return py::module_::import("json").attr("loads")(text);
}

std::string dumps(const py::handle &value) {
  return py::module_::import("json").attr("dumps")(value).cast<std::string>();
}

// tilescope._errors' classes by ApiError::Kind, set when the module loads.
py::handle errorClasses[3];

// A parsed module as Python sees it: immutable, shareable between threads.
struct PyModule {
  std::shared_ptr<const ParsedModule> parsed;
};

// The text and name a source argument stands for: a str, or a Module (its
// canonical text, comments included).
std::pair<std::string, std::string> sourceOf(const py::handle &source, const std::string &name) {
  if (py::isinstance<PyModule>(source)) {
    const PyModule &m = source.cast<const PyModule &>();
    return {print(m.parsed->module), name.empty() ? m.parsed->name : name};
  }
  if (!py::isinstance<py::str>(source))
    throw ApiError{
        ApiError::Usage, "a source is a str of tile IR text or a tilescope.Module", {}, {}};
  return {source.cast<std::string>(), name.empty() ? "<source>" : name};
}

TensorValues tensorFromPython(const std::string &name, const py::handle &value) {
  py::module_ np = py::module_::import("numpy");
  py::array array = np.attr("asarray")(value);
  TensorValues out;
  out.name = name;
  for (py::ssize_t i = 0; i < array.ndim(); ++i)
    out.shape.push_back(array.shape(i));
  char kind = array.dtype().kind();
  if (kind == 'i' || kind == 'u' || kind == 'b') {
    auto ints =
        np.attr("ascontiguousarray")(array, "dtype"_a = "int64").cast<py::array_t<int64_t>>();
    out.ints.assign(ints.data(), ints.data() + ints.size());
  } else if (kind == 'f') {
    auto floats =
        np.attr("ascontiguousarray")(array, "dtype"_a = "float64").cast<py::array_t<double>>();
    out.floats.assign(floats.data(), floats.data() + floats.size());
  } else {
    throw ApiError{ApiError::Usage,
                   "inputs['" + name + "'] is not an array of numbers (numpy kind '" +
                       std::string(1, kind) + "')",
                   {},
                   {}};
  }
  return out;
}

py::array tensorToPython(const TensorValues &t) {
  std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end());
  if (isFloat(t.dtype)) {
    if (t.dtype == Dtype::f64) {
      py::array_t<double> a(shape);
      std::copy(t.floats.begin(), t.floats.end(), a.mutable_data());
      return a;
    }
    py::array_t<float> a(shape);
    std::transform(t.floats.begin(), t.floats.end(), a.mutable_data(),
                   [](double v) { return static_cast<float>(v); });
    return a;
  }
  if (t.dtype == Dtype::pred) {
    py::array_t<bool> a(shape);
    std::transform(t.ints.begin(), t.ints.end(), a.mutable_data(),
                   [](int64_t v) { return v != 0; });
    return a;
  }
  py::array_t<int64_t> a(shape);
  std::copy(t.ints.begin(), t.ints.end(), a.mutable_data());
  return a;
}

template <typename Map> Map namedNumbers(const py::dict &d, const char *what) {
  Map out;
  for (const auto &[key, value] : d)
    out[key.template cast<std::string>()] = value.template cast<typename Map::mapped_type>();
  return out;
}

} // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "tilescope's compiled core; use the `tilescope` package.";
  // The classes live as long as the interpreter: their references are
  // released into plain handles, never dropped after finalization.
  py::module_ errors = py::module_::import("tilescope._errors");
  errorClasses[ApiError::Input] = py::object(errors.attr("InputError")).release();
  errorClasses[ApiError::Tree] = py::object(errors.attr("TreeError")).release();
  errorClasses[ApiError::Usage] = py::object(errors.attr("UsageError")).release();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const ApiError &e) {
      std::string diagnostics;
      llvm::raw_string_ostream os(diagnostics);
      os << llvm::json::Value(llvm::json::Array(e.diagnostics));
      os.flush();
      py::handle cls = errorClasses[e.kind];
      py::object error = cls(e.message, loads(diagnostics),
                             e.path.empty() ? py::object(py::none()) : py::str(e.path));
      PyErr_SetObject(cls.ptr(), error.ptr());
    }
  });

  py::class_<PyModule>(m, "Module", "A parsed tile IR module (tilescope.parse, from_json).")
      .def_property_readonly(
          "kernels",
          [](const PyModule &self) {
            std::vector<std::string> names;
            for (const Kernel &k : self.parsed->module.kernels)
              names.push_back(k.name);
            return names;
          },
          "The kernels' names, in order.")
      .def(
          "fmt", [](const PyModule &self) { return print(self.parsed->module); },
          "The canonical text (`tilescope fmt`).")
      .def(
          "hash",
          [](const PyModule &self, const std::string &kernel) {
            return kernelHash(*self.parsed, kernel);
          },
          "kernel"_a = "", "The structural hash of a kernel (`tilescope fmt --hash`).")
      .def(
          "to_json",
          [](const PyModule &self) {
            std::string text;
            {
              py::gil_scoped_release release;
              text = moduleJsonText(*self.parsed);
            }
            return loads(text);
          },
          "The IR as a JSON tree of dicts and lists (docs/python.md).")
      .def("__repr__", [](const PyModule &self) {
        std::string names;
        for (const Kernel &k : self.parsed->module.kernels)
          names += (names.empty() ? "" : ", ") + k.name;
        return "<tilescope.Module " + names + ">";
      });

  m.def(
      "parse",
      [](const std::string &source, const std::string &name) {
        py::gil_scoped_release release;
        return PyModule{parseSource(source, name)};
      },
      "source"_a, "name"_a = "<source>");

  m.def(
      "from_json",
      [](const py::object &tree) {
        std::string text = py::isinstance<py::str>(tree) ? tree.cast<std::string>() : dumps(tree);
        py::gil_scoped_release release;
        return PyModule{moduleFromJsonText(text)};
      },
      "tree"_a);

  m.def(
      "check",
      [](const py::object &source, const std::string &kernel, const py::dict &args,
         const std::string &name, int64_t timeoutMs) {
        auto [text, file] = sourceOf(source, name);
        CheckOptions options;
        options.name = file;
        options.kernel = kernel;
        options.args = namedNumbers<std::map<std::string, int64_t>>(args, "args");
        if (timeoutMs < 0)
          throw py::value_error("timeout_ms takes a non-negative number (0: no budget)");
        options.timeoutMs = timeoutMs;
        std::string result;
        {
          py::gil_scoped_release release;
          result = checkJson(text, options);
        }
        return loads(result);
      },
      "source"_a, "kernel"_a = "", "args"_a = py::dict(), "name"_a = "",
      "timeout_ms"_a = CheckOptions().timeoutMs);

  m.def(
      "simulate",
      [](const py::object &source, const py::dict &args, const py::dict &inputs, uint64_t seed,
         const std::string &kernel, const std::string &problem, int64_t ctas, int64_t maxSteps,
         int64_t memoryCapMb, const std::string &name) {
        auto [text, file] = sourceOf(source, name);
        SimulateOptions options;
        options.name = file;
        options.kernel = kernel;
        options.seed = seed;
        options.problem = problem;
        options.ctas = ctas;
        options.maxSteps = maxSteps;
        options.memoryCapMb = memoryCapMb;
        for (const auto &[key, value] : args) {
          std::string n = key.cast<std::string>();
          if (py::isinstance<py::int_>(value) && !py::isinstance<py::bool_>(value))
            options.ints[n] = value.cast<int64_t>();
          else if (py::isinstance<py::float_>(value))
            options.floats[n] = value.cast<double>();
          else
            throw ApiError{ApiError::Usage, "args['" + n + "'] is not an int or a float", {}, {}};
        }
        for (const auto &[key, value] : inputs) {
          std::string n = key.cast<std::string>();
          options.inputs[n] = tensorFromPython(n, value);
        }
        SimulateResult result;
        {
          py::gil_scoped_release release;
          result = simulate(text, options);
        }
        py::object out = loads(result.json);
        py::dict tensors;
        for (const TensorValues &t : result.tensors)
          tensors[py::str(t.name)] = tensorToPython(t);
        out["tensors"] = tensors;
        return out;
      },
      "source"_a, "args"_a = py::dict(), "inputs"_a = py::dict(), "seed"_a = 1, "kernel"_a = "",
      "problem"_a = "", "ctas"_a = 0, "max_steps"_a = int64_t{1} << 32, "memory_cap_mb"_a = 4096,
      "name"_a = "");

  m.def(
      "layout",
      [](const std::string &text, const std::string &shape, const std::string &dtype,
         const std::string &target, const std::string &scope, int64_t threads) {
        LayoutOptions options{shape, dtype, target, scope, threads};
        std::string result;
        {
          py::gil_scoped_release release;
          result = layoutJson(text, options);
        }
        return loads(result);
      },
      "text"_a, "shape"_a = "", "dtype"_a = "", "target"_a = "sm_90a", "scope"_a = "auto",
      "threads"_a = 128);

  m.def(
      "reward",
      [](const py::object &source, const std::string &problem, const py::object &seed,
         const std::string &sizes, const std::string &kernel, double timeoutMs, uint64_t maxSteps,
         uint64_t memoryMb, const std::string &name, double staticTimeoutMs, bool staticOnly,
         const std::string &performanceSizes, const std::string &machine,
         const py::dict &dtypes, const std::string &set) {
        if (!(timeoutMs >= 0) || !(staticTimeoutMs >= 0)) // NaN included
          throw py::value_error("timeout_ms and static_timeout_ms take a non-negative number");
        auto [text, file] = sourceOf(source, name.empty() ? "<candidate>" : name);
        RewardOptions options;
        options.kernel = kernel;
        options.point = set;
        options.problem = problem;
        options.sizes = sizes;
        if (!seed.is_none())
          options.seed = seed.cast<uint64_t>();
        options.fileName = file;
        options.timeoutMs = timeoutMs;
        options.staticTimeoutMs = staticTimeoutMs;
        options.maxSteps = maxSteps;
        options.maxMemoryMb = memoryMb;
        options.staticOnly = staticOnly;
        options.performanceSizes = performanceSizes;
        options.machine = machine;
        // The task's element types, as --dtypes (an unknown name is the
        // result's `options.dtypes` diagnostic, as a bad machine is).
        for (const auto &[param, dtype] : dtypes) {
          if (!py::isinstance<py::str>(param) || !py::isinstance<py::str>(dtype))
            throw py::type_error("dtypes maps parameter names to type names: {\"A\": \"bf16\"}");
          options.dtypes[param.cast<std::string>()] = dtype.cast<std::string>();
        }
        std::string result;
        {
          py::gil_scoped_release release;
          result = rewardJson(text, options);
        }
        return loads(result);
      },
      "source"_a, "problem"_a = "", "seed"_a = py::none(), "sizes"_a = "auto", "kernel"_a = "",
      "timeout_ms"_a = RewardOptions().timeoutMs, "max_steps"_a = RewardOptions().maxSteps,
      "memory_mb"_a = RewardOptions().maxMemoryMb, "name"_a = "",
      "static_timeout_ms"_a = RewardOptions().staticTimeoutMs, "static_only"_a = false,
      "performance_sizes"_a = RewardOptions().performanceSizes, "machine"_a = "",
      "dtypes"_a = py::dict(), "set"_a = "");
}
