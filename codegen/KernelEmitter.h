// Internal to the CUDA emitter (CudaEmitter.h): the per-kernel emitter's
// state and its parts, one file each: CudaEmitter.cpp (setup, the whole
// kernel, the preludes, lowerModule), EmitExpressions.cpp (expressions,
// addresses, the polynomial analysis of indices), EmitStatements.cpp
// (statements and the calls of native IR), one file per instruction family
// (EmitAsyncCopy.cpp: TMA and cp.async; EmitWgmma.cpp; EmitTcgen05.cpp),
// EmitRemote.cpp (DSMEM copies and the device scale's calls on peers'
// memory).
#pragma once

#include "codegen/CudaEmitter.h"

#include "dispatch/Dispatch.h"
#include "ir/DeviceScale.h"
#include "ir/Intrinsics.h"
#include "ir/Polynomial.h"
#include "ir/Printer.h"
#include "ir/ThreadIndex.h"
#include "ir/Visitor.h"

#include <fmt/format.h>

#include <map>
#include <numeric>
#include <set>
#include <sstream>

namespace tilescope::codegen::detail {

std::string wgmmaHelperSuffix(const MmaShape &row);

inline std::string cType(Dtype d) {
  switch (d) {
  case Dtype::f64:
    return "double";
  case Dtype::f32:
    return "float";
  case Dtype::f16:
    return "__half";
  case Dtype::bf16:
    return "__nv_bfloat16";
  case Dtype::i8:
    return "int8_t";
  case Dtype::u8:
    return "uint8_t";
  case Dtype::f8e4m3:
    return "uint8_t"; // fp8: bytes (TMA moves them, wgmma reads them)
  case Dtype::f8e5m2:
    return "uint8_t";
  case Dtype::i16:
    return "int16_t";
  case Dtype::i32:
    return "int32_t";
  case Dtype::u32:
    return "uint32_t";
  case Dtype::i64:
    return "int64_t";
  case Dtype::pred:
    return "bool";
  default:
    return "";
  }
}

inline std::string tmaType(Dtype d) {
  switch (d) {
  case Dtype::bf16:
    return "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16";
  case Dtype::f16:
    return "CU_TENSOR_MAP_DATA_TYPE_FLOAT16";
  case Dtype::f32:
    return "CU_TENSOR_MAP_DATA_TYPE_FLOAT32";
  case Dtype::u8:
  case Dtype::i8:
  case Dtype::f8e4m3:
    return "CU_TENSOR_MAP_DATA_TYPE_UINT8";
  case Dtype::f8e5m2:
    return "CU_TENSOR_MAP_DATA_TYPE_UINT8";
  default:
    return "";
  }
}

struct BufferInfo {
  MemScope scope;
  Dtype dtype;
  std::vector<Expr> shape;
  std::vector<int64_t> constShape;
  std::optional<Layout> layout;
  int64_t slots = 0;      // reg: per-thread array length
  int64_t smemOffset = 0; // shared: byte offset in the dynamic allocation
  int64_t bytes = 0;
};

struct TmaMap {
  std::string param;
  Dtype dtype;
  std::vector<int64_t> box; // per dimension of the tensor, outermost first
  int swizzleBytes = 0;
  int index = 0;
};

// A call's positional argument i, and its keyword argument `name` (null
// when not given).
inline const Expr &callArg(const CallStmt &c, size_t i) {
  return c.args.at(i).value;
}
inline Expr callKeyword(const CallStmt &c, std::string_view name) {
  const CallArg *a = c.keyword(name);
  return a ? a->value : nullptr;
}

// A float constant as CUDA text ("1.0f", "inff").
std::string floatLiteral(double v);

class KernelEmitter {
public:
  KernelEmitter(const Kernel &k, Diagnostics &diag, LoweredKernel &info, bool &tcgenHelpers,
                bool pdl = false, std::set<std::string> evictFirst = {})
      : k_(k), diag_(diag), info_(info), target_(targetInfo(k.launch.target)),
        tcgenHelpers_(tcgenHelpers), pdl_(pdl), evictFirst_(std::move(evictFirst)) {}

  bool run(std::string &device, std::string &host);

private:
  // ---- setup
  void collect();
  void error(llvm::SMLoc loc, const std::string &msg) {
    diag_.error(loc, "lower: " + msg);
    failed_ = true;
  }

  // ---- expressions
  std::string ex(const Expr &e);
  std::string index(const Index &x, const Expr &self);
  std::string globalFlat(const std::string &buf, const std::vector<Expr> &idx);
  std::string sharedElement(const BufferInfo &b, const std::vector<std::string> &at);
  int64_t sharedRunWidth(const BufferInfo &b);
  struct RegionStart {
    std::string buffer;
    std::vector<Expr> begin;     // per dimension of the buffer
    std::vector<bool> kept;      // false where a point subscript dropped it
    std::vector<int64_t> extent; // per dimension (1 where dropped)
    bool constantSize = true;    // false: some extent is not a constant (extent keeps the
                                 // enclosing view's there)
  };
  RegionStart regionStart(const Expr &region);
  std::string regionByteAddress(const Expr &region, std::string *buffer);
  std::optional<int64_t> slotOf(const std::string &buf, const BufferInfo &b,
                                const std::vector<Expr> &idx);
  std::optional<int64_t> eval(const Expr &e, int64_t tid);
  Dtype typeOf(const Expr &e);
  // e as an index polynomial (ir/Polynomial.h) whose atoms are the C++ text
  // of its non-affine pieces.
  Poly poly(const Expr &e);
  int64_t divisibility(const Monomial &m);
  std::string barrierAddr(const Expr &e);

  // ---- statements
  std::vector<int64_t> regionExtents(const Expr &region);
  Expr kSlice(const Expr &region, size_t dim, int64_t k, int64_t width = 16);
  // The swizzle span of a shared buffer's layout in bytes: 128, 64, 32, or
  // 16 unswizzled (the key of a descriptor's swizzle code, ir/Descriptors.h).
  static int64_t swizzleSpan(const BufferInfo &b);
  // The byte offsets a descriptor gives an MN-major operand, from its
  // unswizzled layout: the stride (8 rows down) and the leading offset (one
  // swizzle span across; 16 when a row fits in one span). EmitWgmma.cpp.
  std::pair<int64_t, int64_t> mnMajorOffsets(const BufferInfo &b, int64_t spanBytes);
  void block(const Block &b);
  void stmt(const Stmt &s);
  void callStmt(const CallStmt &c);
  // A native whose PTX is its record's spelling alone, with no operands.
  void plainPtx(IntrinsicId id);
  // The native calls of one instruction family each, false for a call of
  // another: EmitAsyncCopy.cpp (TMA, cp.async), EmitWgmma.cpp,
  // EmitTcgen05.cpp.
  bool asyncCopyCall(const CallStmt &c, IntrinsicId id);
  bool wgmmaCall(const CallStmt &c, IntrinsicId id);
  bool tcgen05Call(const CallStmt &c, IntrinsicId id);
  bool tryVectorize(const For &f, int64_t begin, int64_t trips);
  void dsmemCopy(const CallStmt &c, bool load);
  void deviceCall(const CallStmt &c); // device.* in a devices(N) kernel
  void peerCopy(const CallStmt &c);   // device.put / device.get of a CTA
  void peerGet(const CallStmt &c);    // ... of 2-D bf16 tiles of 16-byte vector rows
  void peerElements(const CallStmt &c, bool put); // ... of other tiles, element by element
  void flagCall(const CallStmt &c);   // device.signal / device.wait
  bool peerCopies_ = false;           // a put or get: the call is bracketed by device barriers
  bool multipleOf(const Expr &e, int64_t m);
  void line(const std::string &s) { out_ << std::string(indent_ * 2, ' ') << s << "\n"; }

  const Kernel &k_;
  Diagnostics &diag_;
  LoweredKernel &info_;
  const TargetInfo &target_;
  bool &tcgenHelpers_;
  bool pdl_ = false; // programmatic dependent launch (lowerModule's `pdl`)
  // Global tensors accessed with an L2 evict_first policy (lowerModule's
  // `evictFirst`): their vector accesses go through ts_ld_ef / ts_st_ef.
  std::set<std::string> evictFirst_;
  bool failed_ = false;
  std::map<std::string, BufferInfo> bufs_;
  std::map<std::string, std::pair<int64_t, bool>> barriers_; // name -> (offset, has count)
  std::vector<std::string> symbols_;                         // shape symbols, in order
  std::map<std::string, int64_t> symbolMultiple_;            // from `where S % c == 0`
  std::map<std::string, int64_t> fixedSymbols_;              // from `where S == c`
  bool deviceSide_ = false;                                  // emitting the kernel body
  std::map<std::string, int64_t> env_;                       // unrolled loop variables
  std::vector<std::pair<std::string, Expr>> lets_;           // visible lets, innermost last
  std::map<std::string, Dtype> letTypes_;
  std::map<std::string, TmaMap> tma_;                        // by map name (tmap_NAME)
  std::set<int> wgmmaShapes_;
  // Other wgmma kinds used (fp8: N and the MMA table's row), one helper each.
  std::set<std::pair<int, const MmaShape *>> wgmmaOtherShapes_;
  std::set<std::string> wgmmaAccs_; // register tiles some wgmma accumulates into
  // wgmmas with A from registers: (N, A/B dtype, B MN-major), one helper each.
  std::set<std::tuple<int, Dtype, bool>> wgmmaRegA_;
  // Register tiles some wgmma reads as A: declared 16-byte aligned, so that
  // their 16-bit pairs are read as the 32-bit registers they already are.
  std::set<std::string> regAOperands_;
  void wgmmaRegisterA(const CallStmt &c, const std::string &accName, int n);
  std::vector<std::string> regsInScope_; // register tiles declared, innermost last
  bool usesTcgen05_ = false;
  bool devices_ = false; // a devices(N) kernel (docs/scales.md): on the runtime ts_devices.cuh
  // The scalar parameter `epoch` of a devices kernel: the call's epoch from
  // the peer table, not a launcher argument.
  bool callEpoch(const Param &p) const { return devices_ && !p.isTensor && p.name == "epoch"; }
  std::map<std::string, int64_t> tmemColumns_;
  std::string tmemAddr(const std::string &buf) {
    return fmt::format("(*reinterpret_cast<volatile uint32_t *>(ts_smem + {}))",
                       bufs_.at(buf).smemOffset);
  }
  int64_t smemBytes_ = 0;
  std::ostringstream out_;
  int indent_ = 1;
  friend std::string helperSource(const std::set<int> &);
};

} // namespace tilescope::codegen::detail
