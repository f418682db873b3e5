// Fuzz target: the PTX reader and what runs on what it reads. Any text must
// parse to a module or to diagnostics (never a crash); every kernel of a
// module that parses must condense and lift without crashing, and the lifted
// skeleton's events must name barrier arrays it declares.
#include "fuzz/FuzzSupport.h"
#include "ptx/Condense.h"
#include "ptx/Lift.h"
#include "ptx/Parser.h"

#include <llvm/Support/MemoryBuffer.h>

using namespace tilescope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > fuzz::kMaxInputBytes)
    return 0;
  std::string text(reinterpret_cast<const char *>(data), size);
  fuzz::QuietDiagnostics quiet;
  unsigned id = quiet.diag.sourceMgr().AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "input.ptx"), llvm::SMLoc());
  std::optional<ptx::Module> m = ptx::parseModule(id, quiet.diag);
  if (!m)
    return 0;
  for (const ptx::Function *f : m->kernels()) {
    ptx::KernelSummary s = ptx::condense(*m, *f);
    fuzz::require(s.instructions == int64_t(f->instructions.size()),
                  "condense counts every "
                  "instruction",
                  text);
    ptx::Lifted lifted = ptx::liftSynchronisation(*m, *f, {});
    for (const SyncEvent &e : lifted.skeleton.events)
      fuzz::require(e.barrier.array.empty() || lifted.skeleton.barriers.count(e.barrier.array),
                    "lifted events name declared barrier arrays", text);
  }
  return 0;
}
