// Dispatch: turns every tile-primitive call of a kernel (copy, copy_async,
// gemm, fill, cast, elementwise, reductions) into native IR — calls of the
// native intrinsics of ir/Intrinsics.h and thread-level loops of element
// loads and stores — chosen from the operand layouts and scopes, the execution
// scope and the target, as TIRx does.
//
// The choice is one table (dispatchTable()): for each primitive a list of
// implementations with a priority and a predicate. The implementations of a
// call's primitive are tried in priority order and the first whose predicate
// accepts wins; when none accepts, the diagnostic lists every candidate with
// the reason it refused. A call's `dispatch = "NAME"` keyword forces one
// implementation (its predicate must still accept).
//
// Instruction constraints (TMA boxes, ldmatrix rows, wgmma/tcgen05 shared
// memory descriptors, tcgen05.ld shapes) are not restated here: predicates
// ask ir/InstructionRules.h. That is why dispatch is its own library
// (tilescope_dispatch) on top of tilescope_ir and tilescope_verifier, not part
// of tilescope_ir, which must not know the verifier.
//
// The output is a kernel with no tile-primitive calls left, printable with the
// canonical printer and read by codegen/ and the simulator.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Stmt.h"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

// One operand of a tile primitive: a buffer (or a region of one) or a scalar.
struct Operand {
  Expr expr;             // as written
  bool isScalar = false; // an expression, not a buffer
  std::string buffer;
  MemScope scope = MemScope::Global;
  Dtype dtype = Dtype::f32;
  std::vector<Expr> bufferShape;            // the declared shape (symbolic for global)
  const LayoutSpec *layout = nullptr;       // declared layout; null: row-major on m
  std::vector<Expr> begin;                  // per buffer dimension
  std::vector<int64_t> extent;              // per buffer dimension (1 for points)
  std::vector<bool> kept;                   // dimensions the region keeps
  std::vector<int64_t> regionShape() const; // extents of the kept dimensions
  int64_t elements() const;
  bool whole = false; // the region is the whole buffer
};

// Everything a predicate or an expansion may look at.
struct CallSite {
  const CallStmt *call = nullptr;
  const Kernel *kernel = nullptr;
  TargetKind target = TargetKind::sm_90a;
  ExecScope scope = ExecScope::Thread;
  std::vector<Operand> operands; // positional arguments, resolved
  int64_t scopeThreads() const;  // threads executing the call together
  const CallArg *keyword(std::string_view name) const { return call->keyword(name); }
  bool flag(std::string_view name) const; // a Bool keyword, false when absent
};

// State an expansion may add to: temporary buffers hoisted to the kernel top.
struct DispatchState {
  std::vector<Stmt> hoisted;
  int counter = 0;
  std::string fresh(std::string_view stem) { return std::string(stem) + std::to_string(counter++); }
};

struct DispatchImpl {
  std::string_view primitive; // "copy", "gemm", ... ("elementwise" covers add/mul/exp/...)
  std::string_view name;      // "tma", "wgmma", ... (what `dispatch =` names)
  int priority;               // higher is tried first
  std::string_view summary;
  // Empty when the implementation accepts the call, else why it refuses.
  std::function<std::string(const CallSite &)> refuse;
  std::function<Block(const CallSite &, DispatchState &)> expand;
};

const std::vector<DispatchImpl> &dispatchTable();
// The primitive family a callee belongs to ("add" -> "elementwise").
std::string_view primitiveFamily(std::string_view callee);

// What dispatch decided for one call, and why the others did not take it.
struct DispatchDecision {
  llvm::SMLoc loc;
  std::string primitive;
  std::string chosen;
  std::vector<std::pair<std::string, std::string>> refused; // name, reason
};

struct DispatchResult {
  Kernel kernel;
  std::vector<DispatchDecision> decisions;
};

// Dispatches every tile primitive of `kernel`. Errors (no implementation
// accepts; a forced one refuses or is unknown; an operand that cannot be
// resolved) go to `diag` at the call's location and give nothing back.
std::optional<DispatchResult> dispatchKernel(const Kernel &kernel, Diagnostics &diag);

} // namespace tilescope
