// Writes the seed corpora of the JSON fuzz targets from kernel files, at
// build time (fuzz/CMakeLists.txt), so that the repository holds the kernels
// once and no generated seeds:
//   OUT/ir_json/N.json        the IR tree of each kernel file that parses
//   OUT/reward_inputs/N.txt   a batch line holding that kernel ('1' first)
//   OUT/reward_inputs/tN.txt  a task naming its problem and sizes ('0' first)
// usage: fuzz_make_seeds OUT FILE.tile...
#include "ir/IrJson.h"
#include "ir/Parser.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <string>

using namespace tilescope;
namespace json = llvm::json;

namespace {

bool write(const std::string &path, const std::string &prefix, const json::Value &value) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  if (ec) {
    llvm::errs() << "fuzz_make_seeds: cannot write " << path << ": " << ec.message() << "\n";
    return false;
  }
  out << prefix << value;
  return true;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    llvm::errs() << "usage: fuzz_make_seeds OUT FILE.tile...\n";
    return 2;
  }
  std::string out = argv[1];
  for (const char *dir : {"/ir_json", "/reward_inputs"})
    if (std::error_code ec = llvm::sys::fs::create_directories(out + dir)) {
      llvm::errs() << "fuzz_make_seeds: cannot create " << out << dir << "\n";
      return 1;
    }
  int written = 0;
  for (int i = 2; i < argc; ++i) {
    auto buffer = llvm::MemoryBuffer::getFile(argv[i]);
    if (!buffer)
      continue;
    std::string text = (*buffer)->getBuffer().str();
    llvm::SourceMgr sourceMgr;
    Diagnostics diag(sourceMgr, /*printImmediately=*/false);
    Module module = parseModuleText(text, argv[i], diag);
    if (diag.hasErrors() || module.kernels.empty())
      continue;
    std::string n = std::to_string(i - 1);
    bool ok = write(out + "/ir_json/" + n + ".json", "", moduleToJson(module)) &&
              write(out + "/reward_inputs/" + n + ".txt", "1",
                    json::Object{{"id", n}, {"source", text}, {"sizes", "auto"}});
    if (ok && written < 8)
      ok = write(out + "/reward_inputs/t" + n + ".txt", "0",
                 json::Object{{"problem", "gemm(A, B^T -> C)"},
                              {"kernel", module.kernels.front().name},
                              {"sizes", json::Array{json::Object{{"M", 128}, {"N", 64}}}},
                              {"seed", written}});
    if (!ok)
      return 1;
    ++written;
  }
  return 0;
}
