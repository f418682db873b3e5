#include "layoutviz/Page.h"

#include "ir/Dtype.h"
#include "layoutviz/Evaluation.h"
#include "layoutviz/PageAssets.h"

#include <llvm/Support/raw_ostream.h>

namespace tilescope::viz {

namespace json = llvm::json;

std::string scriptSafeJson(const json::Value &value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << value;
  os.flush();
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

namespace {
void replaceOnce(std::string &page, std::string_view marker, std::string_view with) {
  size_t at = page.find(marker);
  if (at != std::string::npos)
    page.replace(at, marker.size(), with);
}
} // namespace

std::string renderPage(const std::optional<json::Value> &evaluation) {
  json::Array dtypes;
  for (int d = 0; d <= static_cast<int>(Dtype::pred); ++d)
    dtypes.push_back(std::string(dtypeName(static_cast<Dtype>(d))));
  json::Object data{{"mode", evaluation ? "static" : "server"},
                    {"presets", presetMenu()},
                    {"dtypes", std::move(dtypes)},
                    {"defaultPort", kDefaultPort}};
  if (evaluation)
    data["evaluation"] = *evaluation;
  std::string page(kPageHtml);
  // Order matters: the script and style may not contain the markers, but the
  // data could, so it goes in last.
  replaceOnce(page, "/*@CSS@*/", kPageCss);
  replaceOnce(page, "/*@JS@*/", kPageJs);
  replaceOnce(page, "/*@DATA@*/", scriptSafeJson(json::Value(std::move(data))));
  return page;
}

} // namespace tilescope::viz
