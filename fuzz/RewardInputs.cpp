// Fuzz target: the reward's JSON inputs (reward/Task.h), the task document of
// `reward --task` and a line of `reward --batch`. The first byte picks which
// reader gets the rest. Any bytes must be accepted or refused with a position
// inside the text and a reason; an accepted input, written back as JSON from
// what was read, must read again to the same options (nothing read is lost
// or changed on the way).
#include "fuzz/FuzzSupport.h"
#include "reward/Task.h"

#include <llvm/Support/raw_ostream.h>

#include <algorithm>

using namespace tilescope;
namespace json = llvm::json;

namespace {

void requirePosition(llvm::StringRef text, const JsonInputError &error) {
  unsigned lines = unsigned(std::count(text.begin(), text.end(), '\n')) + 1;
  fuzz::require(error.line >= 1 && error.line <= lines && error.column >= 1 &&
                    !error.message.empty(),
                "a refusal points inside the text and says why", error.str("input"));
}

// The task keys of `o` that differ from the defaults, as JSON.
json::Object taskKeys(const RewardOptions &o) {
  RewardOptions defaults;
  json::Object keys;
  if (o.problem != defaults.problem)
    keys["problem"] = o.problem;
  if (o.kernel != defaults.kernel)
    keys["kernel"] = o.kernel;
  if (o.sizes != defaults.sizes)
    keys["sizes"] = o.sizes;
  if (o.seed)
    keys["seed"] = int64_t(*o.seed);
  return keys;
}

std::string text(json::Value v) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << v;
  return os.str();
}

bool sameOptions(const RewardOptions &a, const RewardOptions &b) {
  return a.problem == b.problem && a.kernel == b.kernel && a.sizes == b.sizes && a.seed == b.seed;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0 || size > fuzz::kMaxInputBytes)
    return 0;
  llvm::StringRef input(reinterpret_cast<const char *>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    RewardOptions options;
    JsonInputError error;
    if (!readTask(input, options, error)) {
      requirePosition(input, error);
      return 0;
    }
    std::string written = text(taskKeys(options));
    RewardOptions again;
    JsonInputError second;
    fuzz::require(readTask(written, again, second), "a task written back reads",
                  written + "\n" + second.str("written"));
    fuzz::require(sameOptions(options, again), "a task written back reads the same", written);
    return 0;
  }
  BatchCandidate candidate;
  JsonInputError error;
  if (!readBatchLine(input, RewardOptions(), candidate, error)) {
    requirePosition(input, error);
    return 0;
  }
  json::Object line = taskKeys(candidate.options);
  line["id"] = candidate.id;
  if (!candidate.path.empty())
    line["path"] = candidate.path;
  else
    line["source"] = candidate.source;
  std::string written = text(std::move(line));
  BatchCandidate again;
  JsonInputError second;
  fuzz::require(readBatchLine(written, RewardOptions(), again, second),
                "a batch line written back reads", written + "\n" + second.str("written"));
  fuzz::require(sameOptions(candidate.options, again.options) && again.id == candidate.id &&
                    again.source == candidate.source && again.path == candidate.path,
                "a batch line written back reads the same", written);
  return 0;
}
