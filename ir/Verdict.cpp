#include "ir/Verdict.h"

namespace tilescope {

std::string_view verdictName(Verdict v) {
  switch (v) {
  case Verdict::Proved:
    return "proved";
  case Verdict::Unknown:
    return "unknown";
  case Verdict::Budget:
    return "budget";
  case Verdict::Finding:
    return "finding";
  }
  return "unknown";
}

int verdictExitCode(Verdict v) {
  switch (v) {
  case Verdict::Proved:
    return 0;
  case Verdict::Finding:
    return 1;
  case Verdict::Unknown:
    return 3;
  case Verdict::Budget:
    return 4;
  }
  return 3;
}

} // namespace tilescope
