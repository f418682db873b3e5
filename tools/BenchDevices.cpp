#include "tools/BenchDevices.h"

#include "codegen/RuntimeHeader.h"
#include "codegen/Toolchain.h"
#include "ir/DeviceScale.h"
#include "ir/Dtype.h"
#include "ir/KernelSymbols.h"
#include "simulator/DeviceSimulate.h"
#include "simulator/Problem.h"
#include "simulator/Program.h"
#include "tools/NameValues.h"

#include <fmt/format.h>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

namespace tilescope::tool {
namespace json = llvm::json;

namespace {

// Tensors start on 4 KiB boundaries of the data area (TMA asks for 16 bytes).
constexpr int64_t kTensorAlign = 4096;

bool usage(const std::string &message) {
  llvm::errs() << "tilescope bench: error: " << message << "\n";
  return false;
}

// The problem the kernel names (its annotation), checked: a device problem
// whose operands are tensors of the kernel, and the one --ref names.
std::optional<sim::ProblemSpec> problemOf(const DevicesBenchRequest &r, Diagnostics &diag) {
  const Kernel &k = *r.kernel;
  auto annotation = sim::findProblemAnnotation(r.source, k.name);
  if (!annotation) {
    diag.error(k.loc, fmt::format("bench: kernel '{}' names no problem: a devices kernel's "
                                  "outputs are checked against the float64 reference of its "
                                  "`// problem:` line (allreduce(X -> Y), tp_gemm_allreduce(A, "
                                  "B^T -> C), ...; docs/scales.md)",
                                  k.name));
    return std::nullopt;
  }
  sim::ProblemSyntaxError syntax;
  auto spec = sim::parseProblem(annotation->text, &syntax);
  if (!spec) {
    diag.error(k.loc, fmt::format("bench: the `// problem:` line of '{}' does not parse: column "
                                  "{}: {}",
                                  k.name, syntax.offset + 1, syntax.message));
    return std::nullopt;
  }
  if (!sim::isDeviceProblem(spec->kind)) {
    diag.error(k.loc, fmt::format("bench: '{}' is not a device problem (allreduce, all_gather, "
                                  "reduce_scatter, tp_gemm_allreduce, allgather_gemm, "
                                  "gemm_reduce_scatter)",
                                  spec->kind));
    return std::nullopt;
  }
  if (!r.ref.empty() && r.ref != spec->kind) {
    usage(fmt::format("--ref {}: kernel '{}' computes {}; a devices kernel is checked against "
                      "its own problem (leave --ref out)",
                      r.ref, k.name, spec->text));
    return std::nullopt;
  }
  // The three device problems with a GEMM in front of or behind the collective.
  bool withGemm = spec->kind == "tp_gemm_allreduce" || spec->kind == "allgather_gemm" ||
                  spec->kind == "gemm_reduce_scatter";
  size_t inputs = withGemm ? 2 : 1;
  if (spec->inputs.size() != inputs || spec->outputs.size() != 1) {
    diag.error(k.loc, fmt::format("bench: {} takes {} input{} and one output", spec->kind, inputs,
                                  inputs == 1 ? "" : "s"));
    return std::nullopt;
  }
  std::vector<sim::ProblemOperand> all = spec->inputs;
  all.insert(all.end(), spec->outputs.begin(), spec->outputs.end());
  for (const sim::ProblemOperand &o : all) {
    const Param *p = nullptr;
    for (const Param &q : k.params)
      if (q.name == o.name && q.isTensor)
        p = &q;
    if (!p) {
      diag.error(k.loc, fmt::format("bench: the problem of '{}' names '{}', which is not one of "
                                    "its tensors",
                                    k.name, o.name));
      return std::nullopt;
    }
  }
  return spec;
}

json::Array operands(const std::vector<sim::ProblemOperand> &list) {
  json::Array out;
  for (const sim::ProblemOperand &o : list)
    out.push_back(json::Object{{"name", o.name}, {"transposed", o.transposed}});
  return out;
}

// Writes `text` to `path` unless the file already holds it.
bool writeIfChanged(const std::string &path, const std::string &text) {
  if (auto old = llvm::MemoryBuffer::getFile(path); old && (*old)->getBuffer() == text)
    return true;
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    llvm::errs() << "tilescope bench: error: cannot write " << path << ": " << ec.message() << "\n";
    return false;
  }
  os << text;
  return true;
}

std::string entrySource(const std::string &kernel,
                        const std::vector<codegen::LauncherParam> &launcher) {
  std::string args;
  int offsets = 0, ints = 0, reals = 0;
  for (const codegen::LauncherParam &p : launcher) {
    switch (p.kind) {
    case codegen::LauncherParam::Kind::Offset:
      args += fmt::format(",\n      offsets[{}] /* {} */", offsets++, p.name);
      break;
    case codegen::LauncherParam::Kind::Int:
      args += fmt::format(",\n      ({})ints[{}] /* {} */", p.ctype, ints++, p.name);
      break;
    case codegen::LauncherParam::Kind::Real:
      args += fmt::format(",\n      ({})reals[{}] /* {} */", p.ctype, reals++, p.name);
      break;
    }
  }
  return fmt::format(
      "// Generated by `tilescope bench --devices` (tools/BenchDevices.h): the C entry points of\n"
      "// {0}'s bench library, which codegen/devbench.py loads. Do not edit.\n"
      "#include \"{0}.cu\"\n"
      "#include \"ts_bench_entry.cuh\"\n\n"
      "// {0}'s launcher with its parameters from arrays, in the launcher's order.\n"
      "extern \"C\" int tsb_launch(void *comm, const unsigned long long *offsets,\n"
      "                            const long long *ints, const double *reals, void *stream) {{\n"
      "  (void)offsets;\n  (void)ints;\n  (void)reals;\n"
      "  return tilescope_launch_{0}(static_cast<ts_dev::Communicator *>(comm){1},\n"
      "      static_cast<cudaStream_t>(stream));\n}}\n",
      kernel, args);
}

} // namespace

std::optional<json::Object> planDevicesBench(const DevicesBenchRequest &r, Diagnostics &diag) {
  const Kernel &k = *r.kernel;
  if (r.devices < 1 || r.devices > kMaxDevices) {
    usage(fmt::format("--devices takes 1 to {} (the runtime's peer table), not {}", kMaxDevices,
                      r.devices));
    return std::nullopt;
  }
  std::string error;
  auto values = parseNameValues(r.argsText, &error);
  if (!values) {
    usage("--args: " + error);
    return std::nullopt;
  }
  auto scalars = parseNameValues(r.scalarsText, &error);
  if (!scalars) {
    usage("--scalars: " + error);
    return std::nullopt;
  }
  const Expr &count = k.launch.devices.front();
  std::string symbol;
  if (count->kind == ExprKind::Var) {
    symbol = as<Var>(count).name;
    auto given = values->ints.find(symbol);
    if (given != values->ints.end() && given->second != r.devices) {
      usage(fmt::format("--args {}={} disagrees with --devices {} ({} is the device count of "
                        "'{}')",
                        symbol, given->second, r.devices, symbol, k.name));
      return std::nullopt;
    }
    values->ints.erase(symbol);
  } else if (count->kind != ExprKind::IntImm) {
    diag.error(count->loc, "bench takes devices(N) with N a name or a constant");
    return std::nullopt;
  } else if (as<IntImm>(count).value != r.devices) {
    diag.error(count->loc, fmt::format("bench: kernel '{}' runs on {} devices, not the {} of "
                                       "--devices",
                                       k.name, as<IntImm>(count).value, r.devices));
    return std::nullopt;
  }
  // The sizes --args may give: the kernel's symbols but the device count
  // (--devices) and the rank and count the runtime gives every process.
  std::string sizes;
  for (const std::string &n : kernelSymbols(k))
    if (n != symbol && n != "devid" && n != "ndev")
      sizes += (sizes.empty() ? "" : ", ") + n;
  for (const char *runtime : {"devid", "ndev"})
    if (values->ints.count(runtime) || values->floats.count(runtime)) {
      usage(fmt::format("--args {}: every process's {} is the runtime's (the sizes of '{}': {})",
                        runtime, runtime == std::string("devid") ? "rank" : "device count",
                        k.name, sizes));
      return std::nullopt;
    }
  std::vector<std::string> unknown = namesNoKernelTakes(*values, {&k});
  if (!unknown.empty()) {
    usage(fmt::format("--args {}: '{}' has no such size (its sizes: {}{})", unknown.front(),
                      k.name, sizes.empty() ? "none" : sizes,
                      symbol.empty() ? "" : "; --devices gives " + symbol));
    return std::nullopt;
  }
  auto problem = problemOf(r, diag);
  if (!problem)
    return std::nullopt;
  sim::ArgValues args;
  args.ints = values->ints;
  args.floats = values->floats;
  for (const auto &[name, v] : scalars->ints)
    args.ints[name] = v;
  for (const auto &[name, v] : scalars->floats)
    args.floats[name] = v;
  if (!symbol.empty())
    args.ints[symbol] = r.devices;
  // The sizes as device 0 sees them (a tensor's shape is the same on every
  // device: the allocation is symmetric); bindProgram checks them and the
  // `where` clause, pointing into the kernel.
  sim::ArgValues bound = args;
  bound.ints["devid"] = 0;
  bound.ints["ndev"] = r.devices;
  auto program = sim::bindProgram(k, bound, diag);
  if (!program)
    return std::nullopt;
  json::Array tensors;
  int64_t offset = 0;
  size_t index = 0;
  for (const Param &p : k.params) {
    if (!p.isTensor)
      continue;
    const sim::BufferPlan &b = program->buffers.at(index++);
    json::Array shape;
    for (int64_t e : b.shape)
      shape.push_back(e);
    int64_t bytes = (b.elements * dtypeBits(b.dtype) + 7) / 8;
    tensors.push_back(json::Object{{"name", p.name},
                                   {"dtype", std::string(dtypeName(b.dtype))},
                                   {"shape", std::move(shape)},
                                   {"offset", offset},
                                   {"bytes", bytes}});
    offset += (bytes + kTensorAlign - 1) / kTensorAlign * kTensorAlign;
  }
  json::Object argsJson;
  for (const auto &[name, v] : args.ints)
    argsJson[name] = v;
  for (const auto &[name, v] : args.floats)
    argsJson[name] = v;
  return json::Object{
      {"kernel", k.name},
      {"file", r.file},
      {"problem", json::Object{{"kind", problem->kind},
                               {"text", problem->text},
                               {"inputs", operands(problem->inputs)},
                               {"outputs", operands(problem->outputs)}}},
      {"devices", r.devices},
      {"device_symbol", symbol},
      {"args", std::move(argsJson)},
      {"tensors", std::move(tensors)},
      {"data_bytes", std::max<int64_t>(offset, kTensorAlign)},
      {"reps", r.reps},
  };
}

std::optional<std::string> writeDevicesPackage(json::Object plan, const std::string &loweredSource,
                                               const std::vector<codegen::LauncherParam> &launcher,
                                               TargetKind target, const std::string &dir) {
  std::string kernel = plan.getString("kernel")->str();
  int64_t devices = *plan.getInteger("devices");
  json::Array params;
  for (const codegen::LauncherParam &p : launcher) {
    json::Object param{{"name", p.name}, {"ctype", p.ctype}};
    std::optional<json::Value> value;
    if (p.kind == codegen::LauncherParam::Kind::Offset) {
      param["kind"] = "offset";
      for (const json::Value &t : *plan.getArray("tensors"))
        if (t.getAsObject()->getString("name") == llvm::StringRef(p.name))
          value = *t.getAsObject()->getInteger("offset");
    } else {
      param["kind"] = p.kind == codegen::LauncherParam::Kind::Int ? "int" : "real";
      if (const json::Value *v = plan.getObject("args")->get(p.name))
        value = p.kind == codegen::LauncherParam::Kind::Int ? json::Value(*v->getAsInteger())
                                                            : json::Value(*v->getAsNumber());
    }
    if (!value || (p.kind == codegen::LauncherParam::Kind::Int && !value->getAsInteger())) {
      usage(fmt::format("the launcher of '{}' takes {}, which {} does not give", kernel, p.name,
                        p.kind == codegen::LauncherParam::Kind::Real ? "--scalars" : "--args"));
      return std::nullopt;
    }
    param["value"] = std::move(*value);
    params.push_back(std::move(param));
  }
  json::Array nvcc;
  for (const std::string &a : codegen::nvccArgs(target, codegen::BuildKind::SharedLibrary))
    nvcc.push_back(a);
  plan["launcher"] = std::move(params);
  plan["nvcc_args"] = std::move(nvcc);
  plan["entry"] = kernel + ".entry.cu";
  plan["library"] = kernel + ".so";
  plan["sources"] =
      json::Array{kernel + ".cu", kernel + ".entry.cu", "ts_devices.cuh", "ts_bench_entry.cuh"};
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    usage("cannot create " + dir + ": " + ec.message());
    return std::nullopt;
  }
  auto at = [&](const std::string &name) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, name);
    return path.str().str();
  };
  std::string manifest = at(fmt::format("{}.n{}.json", kernel, devices));
  std::string manifestText;
  llvm::raw_string_ostream os(manifestText);
  os << llvm::formatv("{0:2}", json::Value(std::move(plan))) << "\n";
  os.flush();
  const std::pair<std::string, std::string> files[] = {
      {kernel + ".cu", loweredSource},
      {kernel + ".entry.cu", entrySource(kernel, launcher)},
      {"ts_devices.cuh", codegen::deviceRuntimeHeader()},
      {"ts_bench_entry.cuh", codegen::benchEntryHeader()},
      {"devbench.py", codegen::devicesBenchHarness()},
      {"devbench_rank.py", codegen::devicesBenchRank()},
      {"gpu_harness.py", codegen::gpuHarness()},
  };
  for (const auto &[name, text] : files)
    if (!writeIfChanged(at(name), text))
      return std::nullopt;
  if (!writeIfChanged(manifest, manifestText))
    return std::nullopt;
  return manifest;
}

} // namespace tilescope::tool
