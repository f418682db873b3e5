// The kernel tensors of `tilescope sim` on the host: random inputs, poisoned
// outputs, and .npy files in (--input) and out (--dump). Every problem with a
// file is returned as a message starting with the file's path, never thrown.
#pragma once

#include "simulator/Engine.h"
#include "simulator/Npy.h"

#include <optional>
#include <string>
#include <vector>

namespace tilescope::tool {

// NaN in every element (-1 for integers), nothing written
// (sim::poisonTensor).
void poison(sim::HostTensor &t);

// The .npy element type that holds a dtype's codes ('<u2' for bf16 bits,
// '|u1' for 8-bit and narrower codes); nothing for the rest.
std::optional<npy::ElementType> npyTypeOf(Dtype d);

// Replaces `t`'s values with the array in `path`: its codes in the .npy type
// of `t`'s dtype, or f32 values that the dtype represents exactly. The shape
// must be `t`'s. False with `error` set ("PATH: ...") otherwise.
bool loadNpy(sim::HostTensor &t, const std::string &path, std::string *error);

// Writes every tensor as DIR/NAME.npy (creating DIR); a tensor whose dtype has
// no .npy type is skipped with a note. False with `error` set on a write error.
bool dumpNpy(const std::vector<sim::HostTensor> &tensors, const std::string &dir,
             std::vector<std::string> *notes, std::string *error);

} // namespace tilescope::tool
