// ptxas's figures read from a cubin (`ptxas -o K.cubin`, `nvcc -cubin`), for
// `ptx condense --cubin` and `ptx diff --cubin` (docs/ptx.md).
//
// A cubin is an ELF64 file (e_machine EM_CUDA, 190). What ptxas allocated is
// in its `.nv.info` attributes, each a format byte, an attribute byte, then a
// 16-bit size and that many bytes (format 4) or a 16-bit value (formats 1-3):
//   - `.nv.info`: EIATTR_REGCOUNT (0x2f) and EIATTR_FRAME_SIZE (0x11), each a
//     symbol index and a 32-bit value: registers a thread and the bytes of its
//     stack frame (local memory, spills included);
//   - `.nv.info.KERNEL`: 0x4c (format 2), the number of named barriers used,
//     absent when none is (checked against `ptxas -v` on the corpus:
//     tests/lit/ptx/condense-cubin.test).
// Spill bytes are not recorded in a cubin; `ptxas -v` prints them.
//
// Depends on ptx/Condense.h (PtxasFigures) only.
#pragma once

#include "ptx/Condense.h"

#include <map>
#include <optional>
#include <string>

namespace tilescope::ptx {

// Per kernel (the function symbols REGCOUNT names), its figures; nullopt with
// `error` set when the bytes are not a cubin this reader understands.
std::optional<std::map<std::string, PtxasFigures>> readCubin(const std::string &bytes,
                                                             std::string &error);

// Fills the figures of `s` that no ptxas log gave from `cubin` (read from
// `path`) when it holds s's kernel; a note when log and cubin disagree.
void addCubinFigures(KernelSummary &s, const std::map<std::string, PtxasFigures> &cubin,
                     const std::string &path);

} // namespace tilescope::ptx
