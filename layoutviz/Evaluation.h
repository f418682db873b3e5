// What the layout visualizer shows, computed by the C++ layout engine: one
// request (layout text, shape, dtype, target, launch, scope) becomes one JSON
// document with every owner of every logical element, the shared-memory bank
// of each element, and every diagnostic (parse errors with their column,
// shape admission, and the legality violations with their witnesses).
//
// The page (layoutviz/page/) only draws and indexes this document; it never
// evaluates a layout itself, so the picture is the engine's answer. This
// component depends on ir/ (and on verifier/ when it is built); it must never
// depend on the command line, the simulator or the HTTP server.
#pragma once

#include "ir/Target.h"
#include "layoutviz/Access.h"

#include <llvm/Support/JSON.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tilescope::viz {

struct VizRequest {
  std::string layout; // layout text or preset call, e.g. `wgmma_acc(64, 128)`
  std::string shape;  // `64,128`, `64x128` or `[64, 128]`; empty: the preset's shape
  std::string dtype;  // empty: the preset's element type, else f32
  std::string target = "sm_90a";
  std::string scope = "auto"; // auto | reg | shared | tmem | global
  int64_t threads = 128;      // threads per CTA
  int64_t devices = 1;        // extent of `pid`
  int64_t alloc = 0;          // slots of the allocation on m; 0: the shape's element count
  // The integer fields as typed (the server passes the page's text): when
  // set, they are parsed here, with the CLI's messages, and replace the
  // numbers above.
  std::optional<std::string> threadsText, devicesText, allocText;
  AccessRequest access; // the bank panel's warp request (shared memory)
};

// Draw at most this many owners (elements x replicas); larger layouts are
// reported, not evaluated.
constexpr int64_t kMaxDrawnOwners = int64_t{1} << 18;

// Evaluates a request. Never fails: malformed input comes back as
// `"ok": false` with diagnostics. The document's fields are described in
// docs/layoutviz.md ("The evaluation document").
llvm::json::Value evaluate(const VizRequest &request);

// The per-element arrays of a big document as 32-bit integers: 2^18
// elements are megabytes of JSON numbers, slow to write and to parse.
struct PackedArrays {
  bool used = false;           // false: the arrays are in the document, as above
  std::vector<int32_t> owners; // the document's "owners" (then "ownersCount" instead)
  std::vector<int32_t> banks;  // its "banks" (then "banksCount")
};
// The same evaluation with "owners" and "banks" in `packed` when every value
// fits in 32 bits (else in the document as usual, `packed.used` false).
llvm::json::Value evaluate(const VizRequest &request, PackedArrays &packed);
// The server's binary form (docs/layoutviz.md, "The evaluation document"):
// the document's UTF-8 length as a little-endian uint32, the document,
// spaces up to a multiple of 4 bytes, then the owners and the banks as
// little-endian int32.
std::string packEvaluation(const llvm::json::Value &document, const PackedArrays &packed);

// Weight of a thread axis in the linear thread index of the CTA
// (threadIdx.x): lane + 32 warp, tid_in_wg + 128 wgid, ...; 0 for the
// others. The `T37` of the page's labels; the copy view's threads.
int64_t threadWeight(Axis a);

// How PTX names the register slots `m` of a preset's fragment:
// `{prefix, parts}` — `d` and 1 for the wgmma accumulator (d124), a/b/c for
// mma.sync, `d` and 2 for bf16 ldmatrix (d1.hi), `r` otherwise. The page's
// labels and the copy view's register columns.
llvm::json::Object registerNaming(const std::string &preset, int bits);

// The request read back from a document's "request" field (for tests).
VizRequest requestFromJson(const llvm::json::Object &object);

// The preset menu of the page: every preset of ir/LayoutPresets.h at its
// example arguments, with the shape, dtype and target it is meant for, plus a
// few literal layouts that teach one idea each.
llvm::json::Value presetMenu();

} // namespace tilescope::viz
