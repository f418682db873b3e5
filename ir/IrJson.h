// The IR as a JSON tree, and back: what an agent mutates instead of text
// (the Python module's Module.to_json() / tilescope.from_json()). The tree
// holds exactly what the printer prints, comments included, so that
// moduleFromJson(moduleToJson(m)) prints identically to m.
//
// Shape of the tree (docs/python.md has the full list):
//   module     {"kernels": [kernel...], "file_end_comments": ["// ..."]}
//   kernel     {"name", "params": [param...], "where": [expr...],
//               "launch": {"grid": [expr...], "cluster": [expr...], "threads": 256,
//                          "target": "sm_90a"},
//               "body": [stmt...], "comments": {"before", "open", "body_end"},
//               "space": {"params": [{"name", "values": [expr...]} |
//                                    {"name", "range": [begin, end, step]}],
//                         "points": [{"name", "values": {"P": expr...}}]}} (with parameters:
//              then "threads" may be an expression, and a layout {"text": "S[(BM,64):(64,1)]"})
//   param      {"name", "dtype", "shape": [expr...]} (a global tensor) or
//              {"name", "dtype"} (a scalar)
//   stmt       {"stmt": "buffer" | "mbarrier" | "let" | "for" | "if" | "store" | "call", ...}
//   expr       {"int": 64} {"float": 0.5} {"bool": true} {"string": "32x32b"} {"var": "M"}
//              {"builtin": "blockIdx.x"} {"unary": "-", "operand": e}
//              {"binary": "+", "lhs": e, "rhs": e} {"call": "min", "args": [e...]}
//              {"index": e, "subscripts": [{"point": e} | {"begin": e, "end": e} |
//                                          {"begin": e, "extent": e} | {"full": true}]}
//   layout     {"preset": "wgmma_acc", "args": [64, 128]} or
//              {"shard": [{"extent", "stride", "axis"}...], "replica": [...],
//               "offset": [{"axis", "value"}...], "swizzle": {"bytes": 128, "dtype": "bf16"} |
//               {"bits_kept": M, "bits_xored": B, "shift": S}}
//
// Reading is strict: an unknown key, a missing one, a value of the wrong
// type, a name the text form cannot spell, or a layout the engine refuses is
// an error naming the JSON path of the offending value ($.kernels[0].body[3]).
// A tree is accepted only when its printed text parses back to the same
// module. Nodes built from a tree carry no source locations.
//
// Depends on ir/ and LLVM's JSON support only.
#pragma once

#include "ir/Stmt.h"

#include <llvm/Support/JSON.h>

#include <optional>
#include <string>

namespace tilescope {

llvm::json::Value moduleToJson(const Module &module);
llvm::json::Value exprToJson(const Expr &expr);

// Where a tree is malformed: a JSON path ("$.kernels[0].name") and what is
// wrong there.
struct IrJsonError {
  std::string path;
  std::string message;
  std::string str() const { return path + ": " + message; }
};

// The module a tree describes; nothing, with `error` set, when it is
// malformed.
std::optional<Module> moduleFromJson(const llvm::json::Value &tree, IrJsonError *error);

} // namespace tilescope
