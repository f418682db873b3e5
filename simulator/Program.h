// A kernel bound to concrete arguments, ready to execute: shape symbols and
// scalars have values, every name of the body is resolved (let slots, loop
// variables, buffers, barriers), every buffer has its storage plan (global
// tensor, bytes of shared memory, registers of each thread), and register
// tiles know which thread holds each element in which register.
//
// Register tiles. A layout on thread axes places element i of a `reg` buffer
// in the threads its owners name, at register `m`. Axes the layout does not
// name are free: `wgmma_acc(64, N)` names laneid and wid_in_wg, so every
// warpgroup of the CTA holds its own copy. A `reg` buffer without a layout is
// private to each thread (every thread holds all of it, row-major).
//
// Built once per (kernel, arguments); shared by every CTA the engine runs.
// Reports problems with the arguments as diagnostics (input errors).
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Layout.h"
#include "ir/Stmt.h"

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tilescope::sim {

// Values given on the command line: shape symbols and scalar parameters.
struct ArgValues {
  std::map<std::string, int64_t> ints;
  std::map<std::string, double> floats;
};

struct BufferPlan {
  std::string name;
  MemScope scope = MemScope::Global;
  Dtype dtype = Dtype::f32;
  std::vector<int64_t> shape;
  int64_t elements = 0;
  std::optional<Layout> layout; // shared / reg / tmem; none: row-major / private
  llvm::SMLoc loc;
  int tensor = -1;          // global: index of the kernel parameter
  int64_t sharedOffset = 0; // shared: byte offset in the CTA's shared memory
  int64_t regBase = 0;      // reg: first register of this buffer in every thread
  int64_t regCount = 0;     // reg: registers per thread
  int elementBytes = 4;     // bytes of one element in memory
  // reg with a layout: for each element, the (thread, register) pairs that
  // hold it, sorted by thread (CSR: ownerStart[i] .. ownerStart[i + 1]).
  std::vector<int32_t> ownerStart;
  std::vector<std::pair<int32_t, int32_t>> owners;
  // shared with a layout: sharedByte of every element, computed once.
  std::vector<int64_t> byteOf;
  // tensor memory with a layout: (lane, column) of every element, computed once.
  std::vector<std::pair<int32_t, int32_t>> tmemCellOf;

  bool privateRegs() const { return scope == MemScope::Reg && !layout; }
  // Shared memory: byte offset of element `flat` (layout and swizzle applied;
  // the byte that holds its first bit when sub-byte elements are packed).
  // The table's entry where there is one (inline: every shared access of
  // the whole-region paths asks), else sharedBit / 8.
  int64_t sharedByte(int64_t flat) const {
    return !byteOf.empty() ? byteOf[static_cast<size_t>(flat)] : sharedByteFromLayout(flat);
  }
  int64_t sharedByteFromLayout(int64_t flat) const;
  int64_t sharedBit(int64_t flat) const;
  // Register of element `flat` in `thread`, or -1 when that thread does not hold it.
  int64_t regOf(int64_t flat, int64_t thread) const;
};

struct BarrierPlan {
  std::string name;
  int first = 0;    // index of element 0 among the CTA's barriers
  int64_t size = 1; // 1 for a single barrier
  bool array = false;
  int64_t count = 0; // 0: not initialised by the declaration
  llvm::SMLoc loc;
};

// What a name in the body refers to.
struct NameRef {
  enum Kind : uint8_t { Slot, IntConst, FloatConst, Buffer, Barrier } kind = Slot;
  int index = 0; // slot, buffer or barrier plan
  int64_t intValue = 0;
  double floatValue = 0;
  Dtype dtype = Dtype::f32; // FloatConst
};

struct KernelCode; // ExprCode.h

struct Program {
  const Kernel *kernel = nullptr;
  TargetKind target = TargetKind::sm_90a;
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::array<int64_t, 3> cluster = {1, 1, 1}; // CTAs per cluster in each dimension
  int64_t clusterSize() const { return cluster[0] * cluster[1] * cluster[2]; }
  int64_t threads = 0;
  int64_t warps = 0;
  std::vector<BufferPlan> buffers; // kernel tensors first (index = parameter order)
  std::vector<BarrierPlan> barriers;
  int64_t barrierCount = 0; // barriers per CTA
  int64_t sharedBytes = 0;
  int64_t regsPerThread = 0;
  int slots = 0;                 // let and loop-variable slots per warp
  std::vector<int> tensorParams; // buffer index of each tensor parameter
  std::map<std::string, int64_t> symbols;
  std::map<std::string, double> scalars;

  std::unordered_map<const ExprNode *, NameRef> names;  // Var nodes
  std::unordered_map<const StmtNode *, int> stmtSlot;   // Let / For -> slot
  std::unordered_map<const StmtNode *, int> stmtBuffer; // BufferDecl -> buffer

  // The body compiled for the engine (ExprCode.h), built by bindProgram.
  std::shared_ptr<const KernelCode> code;

  int64_t hostBytes() const; // memory the plan itself holds (ownership tables)
};

// Binds `kernel` to `args`: every shape symbol must have a value, the `where`
// clause must hold, the launch must be well-formed. Diagnostics point at the
// kernel's source. Returns nothing after reporting errors.
std::optional<Program> bindProgram(const Kernel &kernel, const ArgValues &args, Diagnostics &diag);

// Shape symbols of a kernel: names used in tensor shapes that are not scalar
// parameters, in first-use order.
std::vector<std::string> shapeSymbols(const Kernel &kernel);

} // namespace tilescope::sim
