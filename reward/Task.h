// The reward's JSON inputs, read strictly: the task document of
// `tilescope reward --task` ({"problem", "sizes", "seed", "kernel"}) and one
// line of a `--batch` file ({"id", "source" | "path", and the same optional
// keys}). A key that is unknown or of the wrong type is an error, never
// ignored: a task that misspells "sizes" must not run at the default sizes.
// Errors carry the line and column of the offending text (1-based; of the
// key for a bad key or value, of the parser's position for text that is not
// JSON) so that the tool prints `task.json:3:5: error: ...`.
//
// Depends on reward/Reward.h and LLVM's JSON support only.
#pragma once

#include "reward/Reward.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/JSON.h>

#include <string>

namespace tilescope {

struct JsonInputError {
  unsigned line = 1, column = 1;
  std::string message;
  // "FILE:LINE:COL: error: MESSAGE".
  std::string str(llvm::StringRef file) const;
};

// Applies the task TEXT to `options`; false, with `error`, when it is not a
// JSON object of the task's keys with the right types (problem, kernel,
// sizes: strings; sizes may be a list of {"NAME": positive integer} objects;
// seed: a non-negative integer).
bool readTask(llvm::StringRef text, RewardOptions &options, JsonInputError &error);

// One line of a batch.
struct BatchCandidate {
  llvm::json::Value id = nullptr;
  std::string source; // the kernel text, or
  std::string path;   // the file holding it
  RewardOptions options;
};

// Reads one batch LINE over the batch's `defaults`; false, with `error`, when
// it is not a JSON object with an "id", exactly one of "source" and "path",
// and the task's optional keys with the right types. When the line has an id,
// `candidate.id` holds it even on an error (the error line reports it).
bool readBatchLine(llvm::StringRef line, const RewardOptions &defaults, BatchCandidate &candidate,
                   JsonInputError &error);

} // namespace tilescope
