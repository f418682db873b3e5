// Fuzz target: the JSON the tool reads. Today that is the layout
// visualizer's request document (layoutviz/Evaluation.h: requestFromJson, the
// server's query parameters in the same fields): any bytes must either fail
// to parse as JSON or evaluate to a document (never a crash), and the
// document must print as JSON that parses back.
#include "fuzz/FuzzSupport.h"
#include "ir/JsonText.h"
#include "layoutviz/Evaluation.h"

#include <llvm/Support/Error.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

using namespace tilescope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096)
    return 0;
  llvm::Expected<llvm::json::Value> value =
      parseJsonText(llvm::StringRef(reinterpret_cast<const char *>(data), size));
  if (!value) {
    llvm::consumeError(value.takeError());
    return 0;
  }
  const llvm::json::Object *object = value->getAsObject();
  if (!object)
    return 0;
  viz::VizRequest request = viz::requestFromJson(*object);
  std::string out;
  llvm::raw_string_ostream os(out);
  os << viz::evaluate(request);
  os.flush();
  llvm::Expected<llvm::json::Value> back = parseJsonText(out);
  if (!back) {
    std::string message = llvm::toString(back.takeError());
    fuzz::require(false, "the evaluation document is JSON", message);
  }
  return 0;
}
