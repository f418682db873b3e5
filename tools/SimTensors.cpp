#include "tools/SimTensors.h"

#include "simulator/Simulate.h"
#include "simulator/Value.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <fmt/format.h>

#include <cmath>
#include <cstring>

namespace tilescope::tool {

using sim::HostTensor;

std::optional<npy::ElementType> npyTypeOf(Dtype d) {
  switch (d) {
  case Dtype::f32:
    return npy::ElementType::F32;
  case Dtype::f16:
    return npy::ElementType::F16;
  case Dtype::bf16:
    return npy::ElementType::U16;
  case Dtype::i32:
    return npy::ElementType::I32;
  case Dtype::u32:
    return npy::ElementType::U32;
  default:
    // fp8, fp6, fp4 and ue8m0 codes, one per byte as the simulator keeps them.
    if (d != Dtype::pred && dtypeBits(d) <= 8)
      return npy::ElementType::U8;
    return std::nullopt;
  }
}

void poison(HostTensor &t) {
  sim::poisonTensor(t);
}

namespace {

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s;
  for (int64_t d : shape)
    s += (s.empty() ? "" : ", ") + std::to_string(d);
  return "(" + s + (shape.size() == 1 ? ",)" : ")");
}

} // namespace

bool loadNpy(HostTensor &t, const std::string &path, std::string *error) {
  auto array = npy::readFile(path);
  if (!array) {
    std::string message;
    llvm::handleAllErrors(array.takeError(),
                          [&](const llvm::ErrorInfoBase &e) { message = e.message(); });
    *error = fmt::format("{}: {}", path, message);
    return false;
  }
  if (array->shape != t.shape) {
    *error = fmt::format("{}: shape {} does not match tensor '{}' of shape {}", path,
                         shapeText(array->shape), t.name, shapeText(t.shape));
    return false;
  }
  auto want = npyTypeOf(t.dtype);
  bool f32Values = array->type == npy::ElementType::F32 && isFloat(t.dtype);
  if (!want || (array->type != *want && !f32Values)) {
    std::string accepted = !want ? "no .npy type holds them"
                           : *want == npy::ElementType::F32 || !isFloat(t.dtype)
                               ? fmt::format("give '{}'", npy::descr(*want))
                               : fmt::format("give '{}' codes or '<f4' values", npy::descr(*want));
    *error = fmt::format("{}: element type '{}' does not hold the {} values of tensor '{}' ({})",
                         path, npy::descr(array->type), dtypeName(t.dtype), t.name, accepted);
    return false;
  }
  int codeBits = dtypeBits(t.dtype);
  for (int64_t i = 0; i < t.elements(); ++i) {
    uint32_t bits = array->bitsAt(i);
    if (f32Values && t.dtype != Dtype::f32) {
      float v;
      std::memcpy(&v, &bits, 4);
      uint64_t code = sim::encodeFloat(t.dtype, v);
      if (sim::decodeFloat(t.dtype, code) != v && !std::isnan(v)) {
        *error = fmt::format("{}: element {} ({:.9g}) is not representable in {}", path, i, v,
                             dtypeName(t.dtype));
        return false;
      }
      bits = static_cast<uint32_t>(code);
    } else if (codeBits < 8 && (bits >> codeBits) != 0) {
      *error = fmt::format("{}: element {} (code {:#x}) is not a {}-bit {} code", path, i, bits,
                           codeBits, dtypeName(t.dtype));
      return false;
    }
    t.setBits(i, bits);
  }
  return true;
}

bool dumpNpy(const std::vector<HostTensor> &tensors, const std::string &dir,
             std::vector<std::string> *notes, std::string *error) {
  if (auto ec = llvm::sys::fs::create_directories(dir)) {
    *error = fmt::format("{}: cannot create the directory: {}", dir, ec.message());
    return false;
  }
  for (const HostTensor &t : tensors) {
    auto type = npyTypeOf(t.dtype);
    if (!type) {
      notes->push_back(
          fmt::format("'{}' ({}) not dumped: no .npy element type", t.name, dtypeName(t.dtype)));
      continue;
    }
    std::vector<uint32_t> bits(t.elements());
    for (int64_t i = 0; i < t.elements(); ++i)
      bits[i] = static_cast<uint32_t>(t.bitsAt(i));
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, t.name + ".npy");
    if (auto err = npy::writeFile(std::string(path), npy::fromBits(*type, t.shape, bits))) {
      llvm::consumeError(std::move(err));
      *error = fmt::format("{}: cannot write", std::string(path));
      return false;
    }
  }
  return true;
}

} // namespace tilescope::tool
