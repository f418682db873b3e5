// JSON of reward results, both ways (the cache reads stages back). Internal
// to reward/; the public entry point is rewardJson() in Reward.h.
#pragma once

#include "reward/Reward.h"

#include <llvm/Support/JSON.h>

#include <optional>

namespace tilescope::reward_detail {

llvm::json::Object diagnosticJson(const RewardDiagnostic &d);
llvm::json::Object stageJson(const StageResult &s);
std::optional<StageResult> stageFromJson(const llvm::json::Value &v);
llvm::json::Object resultJson(const RewardResult &r);

} // namespace tilescope::reward_detail
