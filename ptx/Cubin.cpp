// Reading ptxas's figures from a cubin's `.nv.info` sections (Cubin.h).
#include "ptx/Cubin.h"

#include <fmt/format.h>

#include <cstdint>
#include <iterator>
#include <vector>

namespace tilescope::ptx {
namespace {

constexpr uint16_t kEmCuda = 190;
constexpr uint8_t kRegCount = 0x2f, kFrameSize = 0x11, kBarriers = 0x4c;
constexpr uint8_t kFormatSized = 4; // EIFMT_SVAL: a 16-bit size, then the bytes

struct Section {
  std::string name;
  uint64_t nameAt = 0; // offset in the section-name table
  uint32_t type = 0, link = 0;
  uint64_t offset = 0, size = 0;
};

// Little-endian reads with bounds: every read past the end sets `bad`.
struct Bytes {
  const std::string &data;
  bool bad = false;
  uint64_t u(uint64_t at, int width) {
    if (at > data.size() || uint64_t(width) > data.size() - at) {
      bad = true;
      return 0;
    }
    uint64_t v = 0;
    for (int k = width - 1; k >= 0; --k)
      v = v << 8 | uint8_t(data[size_t(at) + size_t(k)]);
    return v;
  }
  std::string cstring(uint64_t at) {
    if (at >= data.size()) {
      bad = true;
      return "";
    }
    size_t end = data.find('\0', size_t(at));
    if (end == std::string::npos) {
      bad = true;
      return "";
    }
    return data.substr(size_t(at), end - size_t(at));
  }
};

} // namespace

std::optional<std::map<std::string, PtxasFigures>> readCubin(const std::string &data,
                                                             std::string &error) {
  Bytes b{data};
  if (data.size() < 64 || data.compare(0, 4, "\x7f" "ELF") != 0 || data[4] != 2 || data[5] != 1) {
    error = "not a 64-bit little-endian ELF file";
    return std::nullopt;
  }
  if (b.u(18, 2) != kEmCuda) {
    error = "an ELF file for another machine than CUDA (e_machine " + std::to_string(b.u(18, 2)) +
            ", not 190)";
    return std::nullopt;
  }
  uint64_t shoff = b.u(0x28, 8), entsize = b.u(0x3a, 2), count = b.u(0x3c, 2),
           names = b.u(0x3e, 2);
  if (entsize < 64 || names >= count || count > 65535) {
    error = "malformed section header table";
    return std::nullopt;
  }
  std::vector<Section> sections(count);
  for (uint64_t k = 0; k < count && !b.bad; ++k) {
    uint64_t at = shoff + k * entsize;
    Section &s = sections[k];
    s.type = uint32_t(b.u(at + 4, 4));
    s.offset = b.u(at + 24, 8);
    s.size = b.u(at + 32, 8);
    s.link = uint32_t(b.u(at + 40, 4));
    s.nameAt = b.u(at, 4);
  }
  for (Section &s : sections)
    if (!b.bad)
      s.name = b.cstring(sections[names].offset + s.nameAt);
  // Symbol names (ELF64_Sym: 24 bytes, the name's offset first).
  std::vector<std::string> symbols;
  for (const Section &s : sections)
    if (s.type == 2 /* SHT_SYMTAB */ && s.link < count && !b.bad)
      for (uint64_t at = s.offset; at + 24 <= s.offset + s.size && !b.bad; at += 24)
        symbols.push_back(b.cstring(sections[s.link].offset + b.u(at, 4)));
  std::map<std::string, PtxasFigures> kernels;
  auto symbol = [&](uint64_t index) -> std::string {
    return index < symbols.size() ? symbols[size_t(index)] : "";
  };
  for (const Section &s : sections) {
    if (b.bad || s.name.compare(0, 8, ".nv.info") != 0)
      continue;
    std::string kernel = s.name.size() > 9 ? s.name.substr(9) : "";
    if (!kernel.empty())
      kernels[kernel].barriers = 0; // attribute 0x4c absent: none
    for (uint64_t at = s.offset; at + 4 <= s.offset + s.size && !b.bad;) {
      uint8_t format = uint8_t(b.u(at, 1)), attribute = uint8_t(b.u(at + 1, 1));
      uint64_t half = b.u(at + 2, 2);
      if (format != kFormatSized) {
        if (attribute == kBarriers && !kernel.empty())
          kernels[kernel].barriers = int64_t(half & 0xff);
        at += 4;
        continue;
      }
      if (kernel.empty() && (attribute == kRegCount || attribute == kFrameSize) && half >= 8) {
        std::string name = symbol(b.u(at + 4, 4));
        int64_t value = int64_t(b.u(at + 8, 4));
        if (!name.empty())
          (attribute == kRegCount ? kernels[name].registers : kernels[name].stackFrame) = value;
      }
      at += 4 + half;
    }
  }
  if (b.bad) {
    error = "truncated: a section or attribute runs past the end of the file";
    return std::nullopt;
  }
  // Functions with a frame size but no register count (device functions
  // ptxas did not inline) are not kernels' figures.
  for (auto it = kernels.begin(); it != kernels.end();)
    it = it->second.registers ? std::next(it) : kernels.erase(it);
  if (kernels.empty()) {
    error = "no register count (EIATTR_REGCOUNT) in its .nv.info";
    return std::nullopt;
  }
  return kernels;
}

void addCubinFigures(KernelSummary &s, const std::map<std::string, PtxasFigures> &cubin,
                     const std::string &path) {
  auto it = cubin.find(s.name);
  if (it == cubin.end())
    return;
  const PtxasFigures &c = it->second;
  if (!s.ptxas) {
    s.ptxas = c;
    s.ptxas->source = "cubin " + path;
    s.notes.push_back("spill bytes are not in a cubin (ptxas -v prints them: --ptxas-log)");
    return;
  }
  auto merge = [&](std::optional<int64_t> &mine, const std::optional<int64_t> &theirs,
                   const char *what) {
    if (!mine)
      mine = theirs;
    else if (theirs && *mine != *theirs)
      s.notes.push_back(fmt::format("the ptxas log says {} {}, the cubin {} {}", *mine, what,
                                    *theirs, what));
  };
  merge(s.ptxas->registers, c.registers, "registers");
  merge(s.ptxas->stackFrame, c.stackFrame, "bytes of stack frame");
  merge(s.ptxas->barriers, c.barriers, "barriers");
}

} // namespace tilescope::ptx
