// The page is self-contained and carries its data intact.
#include "layoutviz/Page.h"
#include "layoutviz/Evaluation.h"
#include "layoutviz/Server.h"

#include <doctest/doctest.h>

using namespace tilescope::viz;
namespace json = llvm::json;

namespace {
size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}
} // namespace

TEST_CASE("a static page loads nothing from elsewhere") {
  VizRequest r;
  r.layout = "S[(4,8):(1@warpid,1@laneid)]";
  r.shape = "4,8";
  std::string page = renderPage(evaluate(r));
  CHECK(count(page, "<script src") == 0);
  CHECK(count(page, "<link") == 0);
  CHECK(count(page, "@import") == 0);
  CHECK(count(page, "/*@JS@*/") == 0);
  CHECK(count(page, "/*@CSS@*/") == 0);
  CHECK(count(page, "/*@DATA@*/") == 0);
  CHECK(count(page, "\"mode\":\"static\"") == 1);
  // Exactly the two script elements of the template are closed.
  CHECK(count(page, "</script>") == 2);
}

TEST_CASE("layout text that looks like markup cannot end the data script") {
  VizRequest r;
  r.layout = "</script><b>";
  r.shape = "4";
  std::string page = renderPage(evaluate(r));
  CHECK(count(page, "</script>") == 2);
  CHECK(scriptSafeJson(json::Value("a<b")) == "\"a\\u003cb\"");
}

TEST_CASE("the served page evaluates through the server") {
  std::string page = renderPage(std::nullopt);
  CHECK(count(page, "\"mode\":\"server\"") == 1);
  CHECK(count(page, "api/eval") >= 1);
}

TEST_CASE("links to a view percent-encode the layout text") {
  CHECK(urlEncode("wgmma_acc(64, 128)") == "wgmma_acc(64%2C%20128)");
  CHECK(urlEncode("S[(4,8):(1@warpid,1@laneid)] + 3@m") ==
        "S%5B(4%2C8)%3A(1%40warpid%2C1%40laneid)%5D%20%2B%203%40m");
}
