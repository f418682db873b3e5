// Statements, kernels and modules of the tile IR. Like expressions, nodes are
// immutable, built through `make`, and remember their source location.
// Orchestration (buffers, barriers, loops, branches, intrinsics) stays explicit;
// recurring work is a tile-primitive call with an execution scope.
#pragma once

#include "ir/Expr.h"
#include "ir/LayoutText.h"
#include "ir/Space.h"
#include "ir/Target.h"

#include <map>

namespace tilescope {

enum class MemScope : uint8_t { Global, Shared, Reg, Tmem };
std::string_view memScopeName(MemScope s);

// Who executes a call: one thread (unqualified), a warp, a warpgroup, a CTA
// or a cluster. The namespace of the call names it: `wg.gemm(...)`.
enum class ExecScope : uint8_t { Thread, Warp, Warpgroup, Cta, Cluster };
std::string_view execScopePrefix(ExecScope s); // "", "warp", "wg", "cta", "cluster"

enum class StmtKind : uint8_t { BufferDecl, BarrierDecl, Let, For, If, Store, CallStmt };

struct StmtNode {
  const StmtKind kind;
  const llvm::SMLoc loc;
  virtual ~StmtNode() = default;

protected:
  StmtNode(StmtKind k, llvm::SMLoc l) : kind(k), loc(l) {}
};
using Stmt = std::shared_ptr<const StmtNode>;
using Block = std::vector<Stmt>;

// `shared As: bf16[4, 128, 64] layout(...)`: storage in one memory scope,
// with an element layout (row-major on m when none is written).
struct BufferDecl final : StmtNode {
  MemScope scope;
  std::string name;
  Dtype dtype;
  std::vector<Expr> shape;
  std::optional<LayoutSpec> layout;
  static Stmt make(MemScope scope, std::string name, Dtype dtype, std::vector<Expr> shape,
                   std::optional<LayoutSpec> layout, llvm::SMLoc loc = {});
  BufferDecl(MemScope s, std::string n, Dtype d, std::vector<Expr> sh, std::optional<LayoutSpec> l,
             llvm::SMLoc loc)
      : StmtNode(StmtKind::BufferDecl, loc), scope(s), name(std::move(n)), dtype(d),
        shape(std::move(sh)), layout(std::move(l)) {}
};

// `mbarrier full[4](count = 1)`: an array of mbarriers in shared memory.
// With a count it is initialised (and the init made visible) at kernel entry;
// without one the kernel must `mbarrier.init` it itself.
struct BarrierDecl final : StmtNode {
  std::string name;
  Expr arraySize; // null: a single barrier
  Expr count;     // null: not initialised by the declaration
  static Stmt make(std::string name, Expr arraySize, Expr count, llvm::SMLoc loc = {});
  BarrierDecl(std::string n, Expr a, Expr c, llvm::SMLoc l)
      : StmtNode(StmtKind::BarrierDecl, l), name(std::move(n)), arraySize(std::move(a)),
        count(std::move(c)) {}
};

// `let s = k % 4`: an immutable binding visible to the end of its block.
struct Let final : StmtNode {
  std::string name;
  Expr value;
  static Stmt make(std::string name, Expr value, llvm::SMLoc loc = {});
  Let(std::string n, Expr v, llvm::SMLoc l)
      : StmtNode(StmtKind::Let, l), name(std::move(n)), value(std::move(v)) {}
};

// `for k in 0 .. n step 2 unroll(4) pipelined(3) { ... }`: `unroll` alone
// unrolls fully (unroll = -1); 0 means no annotation.
struct For final : StmtNode {
  std::string var;
  Expr begin, end, step;
  int64_t unroll = 0;
  int64_t pipelineStages = 0;
  Block body;
  static Stmt make(std::string var, Expr begin, Expr end, Expr step, int64_t unroll,
                   int64_t pipelineStages, Block body, llvm::SMLoc loc = {});
  For(std::string v, Expr b, Expr e, Expr s, int64_t u, int64_t p, Block body, llvm::SMLoc l)
      : StmtNode(StmtKind::For, l), var(std::move(v)), begin(std::move(b)), end(std::move(e)),
        step(std::move(s)), unroll(u), pipelineStages(p), body(std::move(body)) {}
};

struct If final : StmtNode {
  Expr cond;
  Block thenBody, elseBody;
  static Stmt make(Expr cond, Block thenBody, Block elseBody, llvm::SMLoc loc = {});
  If(Expr c, Block t, Block e, llvm::SMLoc l)
      : StmtNode(StmtKind::If, l), cond(std::move(c)), thenBody(std::move(t)),
        elseBody(std::move(e)) {}
};

// `C[i, j] = value`: one element written by the executing thread.
struct Store final : StmtNode {
  Expr target; // an Index
  Expr value;
  static Stmt make(Expr target, Expr value, llvm::SMLoc loc = {});
  Store(Expr t, Expr v, llvm::SMLoc l)
      : StmtNode(StmtKind::Store, l), target(std::move(t)), value(std::move(v)) {}
};

struct CallArg {
  std::string keyword; // empty for a positional argument
  Expr value;
  llvm::SMLoc loc;
};

// A tile primitive (`wg.gemm(acc, A, B)`) or a native intrinsic
// (`mbarrier.wait(full[s], parity = p)`); Intrinsics.h lists both.
struct CallStmt final : StmtNode {
  ExecScope scope;
  std::string callee; // dotted, without the scope prefix
  std::vector<CallArg> args;
  static Stmt make(ExecScope scope, std::string callee, std::vector<CallArg> args,
                   llvm::SMLoc loc = {});
  CallStmt(ExecScope s, std::string c, std::vector<CallArg> a, llvm::SMLoc l)
      : StmtNode(StmtKind::CallStmt, l), scope(s), callee(std::move(c)), args(std::move(a)) {}
  const CallArg *keyword(std::string_view name) const;
};

template <typename T> const T &as(const Stmt &s) {
  return static_cast<const T &>(*s);
}

// A kernel parameter: a global tensor with a dtype and a (symbolic) shape,
// or a scalar.
struct Param {
  std::string name;
  bool isTensor = false;
  Dtype dtype = Dtype::f32;
  std::vector<Expr> shape;
  llvm::SMLoc loc;
  // A global tensor's placement over the devices of a `devices(N)` launch,
  // `placement(S[(N,MD,K):(1@pid,K,1)])`: the layout of the logical tensor
  // on the device axis `pid` and the element's place `m` in that device's
  // instance (ir/Placement.h, docs/scales.md). None: the problem's reading.
  std::optional<LayoutSpec> placement;
  // Declared by the launch, not written in the signature: a `devices(N)`
  // kernel's `devid` and `ndev` (and N when it is a fresh name), see
  // addDeviceParams. Printing and JSON leave them out.
  bool implicit = false;
};

struct Launch {
  std::vector<Expr> grid;    // 1 to 3 extents
  std::vector<Expr> cluster; // empty: no cluster
  std::vector<Expr> devices; // empty: one device; else the device count (docs/scales.md)
  int64_t threads = 0;
  // `ctas_per_sm(N)`: N CTAs resident on an SM at once. The lowering asks
  // ptxas for it (`__launch_bounds__(threads, N)`: the SM's registers over N
  // CTAs) and sets the shared-memory carveout to its maximum; the resource
  // check budgets registers and shared memory for N. 1: unsaid.
  int64_t ctasPerSm = 1;
  // Set (and `threads` 0) when the count names kernel parameters,
  // `threads(128 * (CONSUMERS + 1))`; instantiation folds it into `threads`.
  Expr threadsExpr;
  // Set when `ctas_per_sm(...)` names kernel parameters (a family whose
  // points differ in residency); instantiation folds it into `ctasPerSm`.
  Expr ctasPerSmExpr;
  TargetKind target = TargetKind::sm_90a;
  llvm::SMLoc loc;
};

struct Kernel {
  std::string name;
  std::vector<Param> params;
  Space space;                   // compile-time parameters (ir/Space.h); empty for most kernels
  std::vector<Expr> constraints; // the `where` clause
  Launch launch;
  Block body;
  llvm::SMLoc loc;
};

// Comments are not IR: equality and hashing ignore them. The parser records
// where they were, so the printer can put them back: own-line comments before
// a statement or before a block's closing brace, and a comment ending a
// statement's (first) line.
struct Comments {
  std::map<const StmtNode *, std::vector<std::string>> before;
  std::map<const StmtNode *, std::string> endOfLine;
  std::map<const StmtNode *, std::string> afterClose; // after a for/if's final `}`
  std::map<const StmtNode *, std::string> elseLine;   // after `} else {`
  // (for/if statement, 0 = body or then-block, 1 = else-block)
  std::map<std::pair<const StmtNode *, int>, std::vector<std::string>> beforeClose;
  std::vector<std::vector<std::string>> kernelBefore;  // per kernel, in order
  std::vector<std::string> kernelOpen;                 // per kernel: after its `{`
  std::vector<std::vector<std::string>> kernelBodyEnd; // per kernel, in order
  std::vector<std::string> fileEnd;
};

struct Module {
  std::vector<Kernel> kernels;
  std::shared_ptr<const Comments> comments; // may be null
  const Kernel *find(std::string_view name) const;
};

// A `devices(N)` kernel's implicit scalar parameters: `N` when the device
// count is a name no parameter declares, `ndev` (= the device count) and
// `devid` (this device's rank, 0 <= devid < ndev). Called by the parser and
// the JSON reader after the launch; does nothing for one-device kernels.
void addDeviceParams(Kernel &k);

// Structural equality, ignoring source locations.
bool equal(const Stmt &a, const Stmt &b);
bool equal(const Block &a, const Block &b);
bool equal(const Kernel &a, const Kernel &b);
bool equal(const Module &a, const Module &b);

} // namespace tilescope
