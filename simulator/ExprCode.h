// The body of a bound kernel compiled once, before any CTA runs, into the form
// the engine executes: every expression becomes a flat array of operations
// whose names are resolved (let and loop slots, constants, buffers, builtins),
// whose calls know their function and whose constants are decoded; every
// block gets a parallel array of statements that point at their operations
// and at the blocks they open. The engine (Expressions.cpp) evaluates an
// operation for all active lanes of a warp at once, with the semantics, the
// order of evaluation and the diagnostics of the tree it came from, but
// without a map lookup, a string comparison or an allocation per step.
//
// Internal to the simulator; depends on the bound program only.
#pragma once

#include "simulator/Program.h"
#include "simulator/Value.h"

#include <array>
#include <string>
#include <unordered_map>
#include <vector>

namespace tilescope::sim {

enum class OpKind : uint8_t {
  Constant, // literals and bound scalars: filled once per CTA, never recomputed
  Slot,     // a let or loop variable of the warp
  Builtin,  // laneid, warpid, blockIdx.x, ...
  Unary,
  Binary,
  Fma,   // an f32 a * b + c contracted into one fmaf (as nvcc does by default)
  Load,  // an element of a buffer: A[i, k]
  Call,  // a function-style expression
  Error, // evaluating it reports `error` (what the tree walk reported there)
};

enum class CallFn : uint8_t {
  Convert, // bf16(x), i32(x), ...
  ElectSync,
  VoteAny,
  VoteAll,
  Ballot,
  ShflXor,
  ShflIdx,
  ShflUp,
  ShflDown,
  Select,
  Min,
  Max,
  Abs,
  Exp,
  Exp2,
  Log,
  Sqrt,
  Rsqrt,
  Fma, // fma(a, b, c): a * b + c rounded once
  Unknown,
};

struct ExprOp {
  OpKind kind = OpKind::Error;
  const ExprNode *ast = nullptr;
  // Evaluation cannot fail (constants, slots, builtins and arithmetic of them
  // without division): a load whose subscripts all are may compute them first
  // and check their bounds afterwards.
  bool infallible = false;
  // Warp-uniform: every active lane computes the same value (constants,
  // blockIdx, warpid, uniform slots and pure operations on them), so a fast
  // path may read one lane instead of 32. Loads are never marked uniform.
  bool uniform = false;
  LaneValues constant; // Constant: every lane holds the value
  int slot = -1;       // Slot
  BuiltinKind builtin = BuiltinKind::laneid;
  UnaryOp unary = UnaryOp::Neg;
  BinaryOp binary = BinaryOp::Add; // Binary; Fma: Add or Sub
  bool mulLeft = false;            // Fma: the product is the left operand
  int buffer = -1;                 // Load: -1 when `error` says why it names none
  bool pointsInfallible = false;   // Load: every subscript is an infallible point
  CallFn fn = CallFn::Unknown;
  Dtype convertTo = Dtype::f32; // Convert
  // Operands: Unary 1, Binary 2 (lhs, rhs), Fma 3 (product lhs, product rhs,
  // the other term), Load one per subscript (-1: not a point), Call its
  // arguments.
  std::vector<int> args;
  llvm::SMLoc errorLoc;
  std::string error;
};

// One element access of a fused store (below): an f32 of a global tensor or
// of private registers, subscripts that cannot fail, split into warp-uniform
// subscripts (one lane read) and varying ones (an offset per lane).
struct FusedAccess {
  int load = -1; // the Load operation
  bool global = false;
  int tensor = -1;     // global: the host tensor
  int64_t regBase = 0; // registers: the buffer's first register of a thread
  // A register tile with a layout: a lane's element is the register its own
  // thread holds it in (BufferPlan::owners), so every subscript counts as
  // varying and the lane offsets come from the owner table (`buffer`).
  bool owned = false;
  int buffer = -1;
  // owned, and every slot the subscripts read is warp-uniform: the lane
  // offsets are a function of those slots' values (one lane's) and the
  // active lanes, so a warp keeps them by value (Warp::ownedOffsets), not
  // only until the next write of a slot.
  bool byValue = false;
  int dims = 0;
  std::array<int, 3> subscript{-1, -1, -1}; // operation per dimension
  std::array<bool, 3> uniform{};
  // The uniform subscripts, sorted for the executor: constants folded into
  // `constantOffset` (elements; in range, or the statement is not fused),
  // slots read from one lane (`uniformSlots`: slot and dimension), other
  // uniform subscripts evaluated (`uniformEvaluated`: dimension).
  int64_t constantOffset = 0;
  std::array<std::pair<int, int>, 3> uniformSlots{};
  int uniformSlotCount = 0;
  std::array<int, 3> uniformEvaluated{};
  int uniformEvaluatedCount = 0;
  std::array<int64_t, 3> extent{}, stride{}; // stride: elements of one step
  // The slots the varying subscripts read (they are pure functions of them):
  // the lane offsets a warp computed stay valid until one of them is written
  // (Warp::slotVersion). cacheable false: more than fit here, recompute.
  std::array<int, 4> slots{-1, -1, -1, -1};
  int slotCount = 0;
  bool cacheable = true;
  int cache = -1; // index of the warp's offsets (Warp::fusedOffsets)
};

// A store statement whose whole right side runs in one pass over the lanes
// (FusedStore.cpp): every element it reads and the element it writes is a
// FusedAccess, combined by at most one f32 operator or contracted
// multiply-add. The types are then known when the kernel is bound, so the
// pass needs no per-operation dispatch; it gives the bits, statistics and
// diagnostics of the general path.
struct FusedStore {
  enum class Shape : uint8_t { None, Copy, Binary, Fma } shape = Shape::None;
  BinaryOp binary = BinaryOp::Add;   // Binary
  int fmaVariant = 0;                // Fma: 0 p * q + r, 1 p * q - r, -1 r - p * q
  int operands = 0;                  // Copy 1, Binary 2 (lhs, rhs), Fma 3 (p, q, r)
  std::array<FusedAccess, 4> access; // the operands, then the target (access[3])
  // An operand may instead be a float literal or an f32 scalar: its value
  // rounded to f32, as the general path rounds a literal meeting an f32.
  std::array<bool, 3> isConstant{};
  std::array<float, 3> constant{};
  // Or an f32 value computed from registers, slots and constants only
  // (`sc[0] * sc[2]`): the executor evaluates it after resolving the
  // accesses; it reads no memory with side effects, so a pass that then
  // declines leaves nothing for the general path to repeat.
  std::array<int, 3> evaluated{-1, -1, -1};
};

struct StmtCode {
  int slot = -1;           // Let, For
  int value = -1;          // Let and Store: the value; If: the condition; For: the begin
  int target = -1;         // Store: a Load operation (-1: the target is not an element)
  int end = -1, step = -1; // For
  const StmtCode *body = nullptr, *elseBody = nullptr; // For: body; If: then and else
  bool uniformLoop = false;                            // For: begin, end and step are warp-uniform
  // For: uniform, and its body is nothing but fused stores whose accesses the
  // counter moves by a fixed stride (FusedLoop.cpp runs whole iterations).
  bool fusedBody = false;
  FusedStore fused;                                    // Store
};

// The most stores a fused loop body holds.
constexpr size_t kMaxFusedLoopStores = 4;

struct KernelCode {
  std::vector<ExprOp> ops;
  int fusedAccesses = 0; // FusedAccess::cache indices handed out
  std::unordered_map<const ExprNode *, int> opOf;
  std::unordered_map<const Block *, std::vector<StmtCode>> blocks;

  // The operation of an expression of the body; -1 for one that is not there.
  int op(const Expr &e) const;
  const StmtCode *block(const Block &b) const;
};

KernelCode compileKernel(const Program &program);

} // namespace tilescope::sim
