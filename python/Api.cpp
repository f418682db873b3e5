#include "python/Api.h"

#include "ir/IrJson.h"
#include "ir/JsonText.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "layoutviz/Evaluation.h"
#include "tools/JsonOutput.h"

#include <llvm/Support/MemoryBuffer.h>

#include <fmt/format.h>

namespace tilescope::python {

namespace json = llvm::json;

namespace {

std::shared_ptr<ParsedModule> parseInto(const std::string &source, const std::string &name,
                                        const char *what) {
  auto parsed = std::make_shared<ParsedModule>();
  parsed->name = name;
  Diagnostics diag(*parsed->sourceMgr, /*printImmediately=*/false);
  parsed->module = parseModuleText(source, name, diag);
  if (diag.hasErrors()) {
    const Diagnostic &d = diag.all().front();
    throw ApiError{ApiError::Input,
                   fmt::format("{}{}:{}:{}: error: {}", what, d.file, d.line, d.column, d.message),
                   tool::diagnosticsJson(diag),
                   {}};
  }
  return parsed;
}

} // namespace

void throwInputError(const Diagnostics &diag) {
  std::string message = "input error";
  for (const Diagnostic &d : diag.all())
    if (d.kind == Diagnostic::Error) {
      message = fmt::format("{}:{}:{}: error: {}", d.file, d.line, d.column, d.message);
      break;
    }
  throw ApiError{ApiError::Input, message, tool::diagnosticsJson(diag), {}};
}

std::shared_ptr<const ParsedModule> parseSource(const std::string &source,
                                                const std::string &name) {
  return parseInto(source, name, "");
}

std::string moduleJsonText(const ParsedModule &module) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << moduleToJson(module.module);
  return os.str();
}

std::shared_ptr<const ParsedModule> moduleFromJsonText(const std::string &text) {
  auto tree = parseJsonText(text);
  if (!tree) {
    std::string message = llvm::toString(tree.takeError());
    throw ApiError{ApiError::Tree, "$: not JSON: " + message, {}, "$"};
  }
  IrJsonError error;
  std::optional<Module> module = moduleFromJson(*tree, &error);
  if (!module)
    throw ApiError{ApiError::Tree, error.str(), {}, error.path};
  // Locations point into the canonical text, so diagnostics of later calls
  // on this module name lines of what fmt() prints.
  return parseInto(print(*module), "<from_json>", "the tree's text does not parse: ");
}

std::string kernelHash(const ParsedModule &module, const std::string &kernel) {
  const Kernel *k = nullptr;
  if (!kernel.empty()) {
    k = module.module.find(kernel);
    if (!k)
      throw ApiError{ApiError::Usage, fmt::format("no kernel named '{}'", kernel), {}, {}};
  } else if (module.module.kernels.size() == 1) {
    k = &module.module.kernels.front();
  } else {
    throw ApiError{ApiError::Usage,
                   fmt::format("the module holds {} kernels; name one (hash(kernel=...))",
                               module.module.kernels.size()),
                   {},
                   {}};
  }
  return fmt::format("{:016x}", structuralHash(*k));
}

std::string layoutJson(const std::string &layout, const LayoutOptions &options) {
  viz::VizRequest request;
  request.layout = layout;
  request.shape = options.shape;
  request.dtype = options.dtype;
  request.target = options.target;
  request.scope = options.scope;
  request.threads = options.threads;
  json::Value doc = viz::evaluate(request);
  const json::Object *o = doc.getAsObject();
  if (o && o->getBoolean("ok") != true) {
    json::Array diagnostics;
    std::string message = "the layout does not evaluate";
    if (const json::Array *d = o->getArray("diagnostics")) {
      diagnostics = *d;
      for (const json::Value &item : *d)
        if (const json::Object *io = item.getAsObject())
          if (auto m = io->getString("message")) {
            message = fmt::format("{}: {}", layout, m->str());
            break;
          }
    }
    throw ApiError{ApiError::Input, message, std::move(diagnostics), {}};
  }
  std::string out;
  llvm::raw_string_ostream os(out);
  os << doc;
  return os.str();
}

} // namespace tilescope::python
