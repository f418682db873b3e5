// What the commands of the performance model share (`predict`, `tune`, and
// `lower --auto` / `bench --auto`): the machine (a bundled target or a JSON
// file), whether a kernel's where clause admits given sizes, and the point
// a tuning table (model/TuningTable.h) picks for sizes.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Stmt.h"
#include "model/Machine.h"
#include "tools/InputFile.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/CommandLine.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace tilescope::tool {

// The bundled machine of `target`, or the description in `file` when given.
// Nothing, after an input error, when neither reads.
std::optional<model::Machine> loadMachine(llvm::StringRef target, llvm::StringRef file,
                                          Diagnostics &diag);

// The machine options of the model's commands (`predict`, `tune`,
// `calibrate`): --target h100|h200 (default h100) and --machine FILE.json.
struct MachineOptions {
  explicit MachineOptions(llvm::cl::SubCommand &sub);
  // The machine they name (loadMachine).
  std::optional<model::Machine> load(Diagnostics &diag) const;

  llvm::cl::opt<std::string> target;
  llvm::cl::opt<std::string> file;
};

// Whether the where clause of `kernel` (no parameters left) holds at `sizes`:
// true, false with the constraint that fails in `why`, or nothing when a
// constraint reads a name `sizes` lacks (named in `why`); `where` gets the
// constraint's location.
std::optional<bool> admits(const Kernel &kernel, const std::map<std::string, int64_t> &sizes,
                           std::string *why, llvm::SMLoc *where = nullptr);

// The point the tuning table (`tableFile`, else the one shipped for the
// kernel and `target`) picks for `sizes`: the nearest entry whose point
// admits them; `evictFirst` (when given) gets the entry's tensors for `lower
// --evict-first`. Nothing after an input error (no table, no entry admits).
std::optional<std::string> tablePoint(const Kernel &family, llvm::StringRef tableFile,
                                      llvm::StringRef target,
                                      const std::map<std::string, int64_t> &sizes,
                                      Diagnostics &diag,
                                      std::vector<std::string> *evictFirst = nullptr);

// The point options of a command that runs one point (`lower`, `bench`):
// --set, or --auto with the sizes of --args and a table. Lives as long as
// the PointChoice it fills.
struct PointOptions {
  std::string set;
  bool pick = false; // --auto
  std::string args, table, target;
  std::map<std::string, int64_t> sizes; // of args, filled by choosePoint
  std::vector<std::string> evictFirst;   // --auto: the chosen entry's (TableEntry)
};

// The point options of `lower` and `bench` as command-line options of
// `sub`: --set, --auto (described by `autoDesc`), --table, --target, and
// --allow-unknown ("`verb` a kernel that `tilescope check` leaves
// unknown ...").
struct PointFlags {
  PointFlags(llvm::cl::SubCommand &sub, const char *autoDesc, llvm::StringRef verb);
  // Loads `file` into `in` (CommandInput::load) at the point these options
  // and the sizes of --args (`args`) choose; false after an input error.
  bool load(CommandInput &in, llvm::StringRef file, llvm::StringRef kernel,
            const std::string &args) const;
  // After load with --auto: the tensors the chosen entry is lowered with an
  // L2 evict_first policy for (`lower --evict-first`); empty otherwise.
  mutable std::vector<std::string> evictFirst;

  std::string allowUnknownDesc; // before the options, which keep a reference to it
  llvm::cl::opt<std::string> set;
  llvm::cl::opt<bool> pick;
  llvm::cl::opt<std::string> table;
  llvm::cl::opt<std::string> target;
  llvm::cl::opt<bool> allowUnknown;
};

// Fills `point` from `options` (with --auto, a chooser that reads the table
// and says its choice on stderr); false after a message on stderr when they
// conflict or --args does not parse.
bool pointChoiceFrom(PointOptions &options, PointChoice &point);

} // namespace tilescope::tool
