#include "verifier/SharedContext.h"

namespace tilescope::detail {

z3::context &sharedContext() {
  thread_local z3::context ctx;
  return ctx;
}

} // namespace tilescope::detail
