// Fuzz target: the .npy reader (`sim --input`, `mma --a`). Any bytes must
// parse to an array or to an error with its offset (never a crash); an
// array that parses must serialize to bytes that parse back to it.
#include "fuzz/FuzzSupport.h"
#include "simulator/Npy.h"

#include <llvm/Support/Error.h>

using namespace tilescope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 20)
    return 0;
  llvm::Expected<npy::Array> array = npy::parse(llvm::ArrayRef<uint8_t>(data, size));
  if (!array) {
    llvm::consumeError(array.takeError());
    return 0;
  }
  std::vector<uint8_t> bytes = npy::serialize(*array);
  llvm::Expected<npy::Array> again = npy::parse(bytes);
  if (!again) {
    std::string message = llvm::toString(again.takeError());
    fuzz::require(false, "serialize(parse(x)) parses", message);
  }
  fuzz::require(again->type == array->type && again->shape == array->shape &&
                    again->data == array->data,
                "parse(serialize(a)) == a");
  return 0;
}
