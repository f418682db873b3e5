#include "reward/RewardCache.h"

#include "ir/JsonText.h"
#include "reward/Json.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Support/xxhash.h>

#include <fmt/format.h>

#include <unistd.h>

namespace tilescope {

RewardCache::RewardCache(std::string dir) : dir_(std::move(dir)) {
  if (!dir_.empty())
    llvm::sys::fs::create_directories(dir_);
}

std::string RewardCache::path(const std::string &key) const {
  return fmt::format("{}/{:016x}.json", dir_, llvm::xxHash64(key));
}

std::optional<RewardCache::Entry> RewardCache::find(const std::string &key) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = memory_.find(key); it != memory_.end()) {
    ++hits_;
    return it->second;
  }
  if (!dir_.empty()) {
    auto buffer = llvm::MemoryBuffer::getFile(path(key));
    if (buffer) {
      auto parsed = parseJsonText((*buffer)->getBuffer());
      const llvm::json::Object *o = parsed ? parsed->getAsObject() : nullptr;
      const llvm::json::Array *stages = o ? o->getArray("stages") : nullptr;
      llvm::Optional<llvm::StringRef> storedKey = o ? o->getString("key") : llvm::None;
      if (stages && storedKey && *storedKey == key) {
        Entry out;
        for (const llvm::json::Value &v : *stages)
          if (auto s = reward_detail::stageFromJson(v))
            out.stages.push_back(std::move(*s));
        if (const llvm::json::Array *anchors = o->getArray("anchors"))
          for (const llvm::json::Value &a : *anchors)
            if (const llvm::json::Array *lc = a.getAsArray(); lc && lc->size() == 2)
              out.anchors.emplace_back(unsigned((*lc)[0].getAsInteger().getValueOr(0)),
                                       unsigned((*lc)[1].getAsInteger().getValueOr(0)));
        if (out.stages.size() == stages->size()) {
          memory_[key] = out;
          ++hits_;
          return out;
        }
      }
      if (!parsed)
        llvm::consumeError(parsed.takeError());
    }
  }
  ++misses_;
  return std::nullopt;
}

void RewardCache::store(const std::string &key, const Entry &entry) {
  std::lock_guard<std::mutex> lock(mutex_);
  memory_[key] = entry;
  if (dir_.empty())
    return;
  llvm::json::Array array, anchors;
  for (const StageResult &s : entry.stages)
    array.push_back(reward_detail::stageJson(s));
  for (const auto &[line, column] : entry.anchors)
    anchors.push_back(llvm::json::Array{int64_t(line), int64_t(column)});
  // Written whole under a temporary name and renamed: readers in other
  // processes see the old file or the new one, never half of one.
  std::string final = path(key);
  std::string temp = fmt::format("{}.{}.tmp", final, ::getpid());
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(temp, ec);
    if (ec)
      return;
    out << llvm::json::Value(llvm::json::Object{
        {"key", key}, {"stages", std::move(array)}, {"anchors", std::move(anchors)}});
  }
  llvm::sys::fs::rename(temp, final);
}

} // namespace tilescope
