// The page's source files (layoutviz/page/*) as strings, generated into the
// build tree by EmbedPage.cmake. Internal to layoutviz/ (Page.cpp reads them);
// depends on nothing.
#pragma once

namespace tilescope::viz {
extern const char *const kPageHtml;
extern const char *const kPageCss;
extern const char *const kPageJs;
} // namespace tilescope::viz
