// The parameters of a devices(N) kernel's host launcher, as the emitters
// write it (codegen/CudaEmitter.h, codegen/DeviceEmitter.h):
//
//   int tilescope_launch_<kernel>(ts_dev::Communicator *comm, PARAMS..., cudaStream_t stream)
//
// PARAMS are the byte offsets of the tensor parameters in the data area of
// the symmetric regions, then the shape symbols and scalar parameters the
// launcher takes. A caller that does not include the lowered source (the
// generated entry point of `tilescope bench --devices`, tools/BenchDevices.h)
// forwards its values in this order.
//
// Depends on nothing.
#pragma once

#include <string>

namespace tilescope::codegen {

struct LauncherParam {
  enum class Kind {
    Offset, // a tensor's byte offset in the data area (size_t)
    Int,    // a shape symbol or integer scalar (long long)
    Real,   // a floating-point scalar
  };
  std::string name;
  Kind kind = Kind::Int;
  std::string ctype; // as the launcher declares it: "size_t", "long long", "float"
};

} // namespace tilescope::codegen
