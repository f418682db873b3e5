// The copy view: data moving between two layouts of one tile — a register
// fragment and a shared-memory tile (wgmma accumulator -> 128B-swizzled
// tile, ldmatrix from a tile into fragments, ...). For one warp it lists the
// requests the move makes, each split into phases by the one bank model
// (ir/BankModel.h), the elements every thread moves, and whether the shared
// tile is legal for the instruction named (the verifier's instruction rules,
// ir/InstructionRules.h), e.g. `tma` for the TMA store that follows.
//
// Requests: with an instruction that has its own shared-memory pattern
// (ldmatrix/stmatrix, lds/sts) that pattern, as `tilescope layout --banks`
// uses it; otherwise each thread moves its registers in order, as many
// consecutive ones per access as are contiguous and aligned in shared
// memory (up to 16 bytes).
//
// With a global tile (CopyRequest::global) the copy is one stage of a path:
// global -> shared by TMA, then shared -> registers (ldmatrix, lds), or
// registers -> shared, then shared -> global by a TMA store.
//
// Depends on ir/ and verifier/; never on the server.
#pragma once

#include <llvm/Support/JSON.h>

#include <cstdint>
#include <string>

namespace tilescope::viz {

struct CopyRequest {
  std::string from, to; // layout texts: one a register fragment, one a shared tile
  std::string shape;    // empty: a preset's own shape
  std::string dtype;    // empty: f32, or the type a swizzle mode names
  std::string target = "sm_90a";
  std::string inst; // instruction rules for the shared tile (tma, ldmatrix.x4, ...)
  std::string warp = "0";
  // Optional: the global tile the shared tile is loaded from (registers are
  // the destination) or stored to (registers are the source) by TMA, a
  // layout on m (global elements): e.g. S[(16,16):(4096,1)], a 16x16 tile
  // of a row-major matrix 4096 elements wide. The view then follows each
  // element global -> shared -> registers (or back), with the 32-byte
  // sectors the tile touches and the TMA's legality (the verifier's `tma`
  // rule with the global strides).
  std::string global;
};

// Never fails: malformed input comes back as "ok": false with diagnostics.
llvm::json::Value evaluateCopy(const CopyRequest &request);

} // namespace tilescope::viz
