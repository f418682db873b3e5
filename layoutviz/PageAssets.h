// The page's source files (layoutviz/page/*), compiled in by
// EmbedPage.cmake at build time. Internal to layoutviz/.
#pragma once

namespace tilescope::viz {
extern const char *const kPageHtml;
extern const char *const kPageCss;
extern const char *const kPageJs;
} // namespace tilescope::viz
