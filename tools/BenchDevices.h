// `tilescope bench --devices N` on a devices(N) kernel (docs/scales.md,
// "tilescope bench on devices kernels"): the CPU side of the benchmark.
//
// A GPU machine may have no tilescope (no Z3, no LLVM), so the work is split
// as for the one-GPU bench's portable package: tilescope checks the request,
// runs the proofs, lowers the kernel and writes a *package*, a flat folder
// that the GPU side runs with nothing but Python, PyTorch and nvcc:
//
//   K.cu               the lowered kernel (`tilescope lower`'s text)
//   K.entry.cu         C entry points over it: ts_bench_entry.cuh (open the
//                      communicator, device barrier, finalize) and
//                      tsb_launch, the kernel's launcher with its parameters
//                      from arrays (codegen/Launcher.h gives their order)
//   ts_devices.cuh, ts_bench_entry.cuh   the runtime (embedded in tilescope)
//   devbench.py, devbench_rank.py, gpu_harness.py   the harness (embedded)
//   K.nN.json          the manifest of one run: N, the sizes, the problem,
//                      every tensor's dtype, shape and byte offset in the
//                      symmetric region, the launcher's values, nvcc's flags
//
// `python3 PKG/devbench.py PKG/K.nN.json` builds K.so once (it does not
// depend on N or the sizes: one package folder holds the manifests of
// several runs) and runs N processes (codegen/devbench.py says how it
// checks and times). `tilescope bench` without --package runs exactly that
// when the machine has a GPU.
#pragma once

#include "codegen/Launcher.h"
#include "ir/Diagnostics.h"
#include "ir/Stmt.h"

#include <llvm/Support/JSON.h>

#include <optional>
#include <string>
#include <vector>

namespace tilescope::tool {

struct DevicesBenchRequest {
  std::string file; // as given on the command line
  const Kernel *kernel = nullptr;
  int64_t devices = 0;     // --devices
  std::string argsText;    // --args
  std::string scalarsText; // --scalars
  std::string ref;         // --ref (empty: the kernel's problem)
  int64_t reps = 50;       // --reps
  std::string source;      // the file's text (for its `// problem:` annotation)
};

// The manifest of a run, checked against the kernel: the device count
// (bound to the launch's symbol, which --args may repeat only with the same
// value), the sizes (every shape symbol given, the `where` clause holding,
// names the kernel does not take refused), the problem (a device problem
// whose operands are tensors of the kernel; --ref, when given, must name
// it). Nothing after an input error: at the kernel or launch (file:line:col)
// or on the option (`tilescope bench: error: ...`).
std::optional<llvm::json::Object> planDevicesBench(const DevicesBenchRequest &request,
                                                   Diagnostics &diag);

// Writes the package of `plan` into `dir` (created if needed; files whose
// text is already there are left alone, so that K.so is not rebuilt): the
// lowered source, the entry file calling the launcher with `launcher`'s
// parameters, the runtime and the harness, and the manifest, whose path it
// returns. Nothing after an error on stderr.
std::optional<std::string> writeDevicesPackage(llvm::json::Object plan,
                                               const std::string &loweredSource,
                                               const std::vector<codegen::LauncherParam> &launcher,
                                               TargetKind target, const std::string &dir);

} // namespace tilescope::tool
