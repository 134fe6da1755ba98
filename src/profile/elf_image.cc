// SPDX-License-Identifier: Apache-2.0
#include "profile/elf_image.h"

#include <cxxabi.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <lzma.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "base/file_util.h"

namespace vigil {
namespace {

// MiniDebugInfo is a small xz-compressed ELF; a decompressed one above this is not a real one.
constexpr uint64_t kMaxDebugDataBytes = 256ull << 20;
// Symbol tables larger than this (tens of millions of symbols) are refused rather than loaded.
constexpr size_t kMaxSymbols = 20'000'000;

struct ElfCloser {
  void operator()(Elf* elf) const { elf_end(elf); }
};
using ElfPtr = std::unique_ptr<Elf, ElfCloser>;

struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) close(fd);
  }
};

bool IsFunction(const GElf_Sym& sym) {
  int type = GELF_ST_TYPE(sym.st_info);
  return (type == STT_FUNC || type == STT_GNU_IFUNC) && sym.st_shndx != SHN_UNDEF &&
         sym.st_value != 0;
}

std::string Hex(const unsigned char* bytes, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 15];
  }
  return out;
}

std::string Dirname(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

StatusOr<std::string> Decompress(const void* data, size_t size) {
  lzma_stream stream = LZMA_STREAM_INIT;
  if (lzma_stream_decoder(&stream, UINT64_MAX, 0) != LZMA_OK) {
    return DataLossError(".gnu_debugdata: cannot start the xz decoder");
  }
  std::string out;
  stream.next_in = static_cast<const uint8_t*>(data);
  stream.avail_in = size;
  lzma_ret ret = LZMA_OK;
  while (ret == LZMA_OK) {
    if (out.size() >= kMaxDebugDataBytes) {
      lzma_end(&stream);
      return DataLossError(".gnu_debugdata: larger than 256 MiB decompressed");
    }
    size_t old = out.size();
    out.resize(old + (1 << 20));
    stream.next_out = reinterpret_cast<uint8_t*>(out.data() + old);
    stream.avail_out = 1 << 20;
    ret = lzma_code(&stream, LZMA_FINISH);
    out.resize(out.size() - stream.avail_out);
  }
  lzma_end(&stream);
  if (ret != LZMA_STREAM_END) return DataLossError(".gnu_debugdata: not a valid xz stream");
  return out;
}

}  // namespace

// Fills an ElfImage from one open libelf handle (the file, its MiniDebugInfo or its debug file).
class ElfImageLoader {
 public:
  explicit ElfImageLoader(ElfImage* image) : image_(image) {}

  // Headers, segments, build id and debug link: only from the main file.
  Status ReadLayout(Elf* elf) {
    GElf_Ehdr ehdr;
    if (gelf_getehdr(elf, &ehdr) == nullptr) return DataLossError("not an ELF file");
    image_->is_dyn_ = ehdr.e_type == ET_DYN;
    size_t count = 0;
    if (elf_getphdrnum(elf, &count) != 0) count = 0;
    for (size_t i = 0; i < count; ++i) {
      GElf_Phdr phdr;
      if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_LOAD) {
        continue;
      }
      image_->segments_.push_back(
          ElfSegment{phdr.p_offset, phdr.p_vaddr, phdr.p_filesz, (phdr.p_flags & PF_X) != 0});
    }
    size_t shstrndx = 0;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0) return OkStatus();
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) == nullptr) continue;
      const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
      if (shdr.sh_type == SHT_NOTE) ReadBuildId(scn);
      if (name != nullptr && std::strcmp(name, ".gnu_debuglink") == 0) {
        Elf_Data* data = elf_getdata(scn, nullptr);
        if (data && data->d_size > 0) {
          const char* text = static_cast<const char*>(data->d_buf);
          debug_link_ = std::string(text, strnlen(text, data->d_size));
        }
      }
    }
    return OkStatus();
  }

  // Function symbols of .symtab and .dynsym; returns the MiniDebugInfo section's bytes if any.
  std::string ReadSymbols(Elf* elf, std::string_view source_prefix) {
    std::string debugdata;
    size_t shstrndx = 0;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0) return debugdata;
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) == nullptr) continue;
      const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
      if (shdr.sh_type == SHT_SYMTAB || shdr.sh_type == SHT_DYNSYM) {
        if (ReadSymbolTable(elf, scn, shdr) && name != nullptr) {
          AddSource(source_prefix.empty() ? std::string(name) : std::string(source_prefix));
        }
      } else if (name != nullptr && std::strcmp(name, ".gnu_debugdata") == 0 &&
                 shdr.sh_type != SHT_NOBITS) {
        Elf_Data* data = elf_rawdata(scn, nullptr);
        if (data && data->d_buf)
          debugdata.assign(static_cast<const char*>(data->d_buf), data->d_size);
      }
    }
    return debugdata;
  }

  void Finish() {
    auto& syms = image_->symbols_;
    std::sort(syms.begin(), syms.end(), [](const ElfSymbol& a, const ElfSymbol& b) {
      if (a.address != b.address) return a.address < b.address;
      if (a.size != b.size) return a.size > b.size;
      return a.name < b.name;
    });
    syms.erase(
        std::unique(syms.begin(), syms.end(),
                    [](const ElfSymbol& a, const ElfSymbol& b) { return a.address == b.address; }),
        syms.end());
  }

  const std::string& debug_link() const { return debug_link_; }

 private:
  void AddSource(const std::string& source) {
    auto& sources = image_->symbol_sources_;
    if (std::find(sources.begin(), sources.end(), source) == sources.end()) {
      sources.push_back(source);
    }
  }

  bool ReadSymbolTable(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr) {
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || shdr.sh_entsize == 0) return false;
    size_t count = shdr.sh_size / shdr.sh_entsize;
    bool any = false;
    for (size_t i = 0; i < count && image_->symbols_.size() < kMaxSymbols; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr || !IsFunction(sym)) continue;
      const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
      if (name == nullptr || *name == '\0') continue;
      std::string_view plain(name);
      // Versioned dynamic names ("cudaMalloc@@libcudart.so.12") are stored without the version.
      if (size_t at = plain.find('@'); at != std::string_view::npos) plain = plain.substr(0, at);
      image_->symbols_.push_back(ElfSymbol{std::string(plain), sym.st_value, sym.st_size});
      any = true;
    }
    return any;
  }

  void ReadBuildId(Elf_Scn* scn) {
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr) return;
    size_t offset = 0;
    GElf_Nhdr nhdr;
    size_t name_offset = 0, desc_offset = 0;
    while ((offset = gelf_getnote(data, offset, &nhdr, &name_offset, &desc_offset)) > 0) {
      if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
          std::memcmp(static_cast<const char*>(data->d_buf) + name_offset, "GNU", 4) == 0) {
        image_->build_id_ =
            Hex(static_cast<const unsigned char*>(data->d_buf) + desc_offset, nhdr.n_descsz);
        return;
      }
    }
  }

  ElfImage* image_;
  std::string debug_link_;
};

StatusOr<ElfImage> ElfImage::Load(const std::string& path, bool look_for_debug_file,
                                  std::string_view debug_root) {
  if (elf_version(EV_CURRENT) == EV_NONE) return FailedPreconditionError("libelf: version");
  FdCloser file{open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) return NotFoundError("open " + path + ": " + std::strerror(errno));
  struct stat st;
  if (fstat(file.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return InvalidArgumentError(path + ": not a regular file");
  }
  ElfPtr elf(elf_begin(file.fd, ELF_C_READ_MMAP, nullptr));
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF) {
    return DataLossError(path + ": not an ELF file");
  }
  ElfImage image;
  image.path_ = path;
  ElfImageLoader loader(&image);
  if (Status s = loader.ReadLayout(elf.get()); !s.ok()) return s.WithContext(path);
  std::string debugdata = loader.ReadSymbols(elf.get(), "");
  if (!debugdata.empty()) {
    auto inner = Decompress(debugdata.data(), debugdata.size());
    if (inner.ok()) {
      ElfPtr mini(elf_memory(inner->data(), inner->size()));
      if (mini && elf_kind(mini.get()) == ELF_K_ELF) {
        loader.ReadSymbols(mini.get(), ".gnu_debugdata");
      }
    }
  }
  if (look_for_debug_file) {
    std::vector<std::string> candidates;
    if (image.build_id_.size() > 2) {
      candidates.push_back(JoinPath(debug_root, ".build-id/" + image.build_id_.substr(0, 2) + "/" +
                                                    image.build_id_.substr(2) + ".debug"));
    }
    if (!loader.debug_link().empty()) {
      std::string dir = Dirname(path);
      candidates.push_back(JoinPath(dir, loader.debug_link()));
      candidates.push_back(JoinPath(dir, ".debug/" + loader.debug_link()));
      candidates.push_back(JoinPath(debug_root, dir + "/" + loader.debug_link()));
    }
    for (const std::string& candidate : candidates) {
      if (candidate == path) continue;
      FdCloser debug{open(candidate.c_str(), O_RDONLY | O_CLOEXEC)};
      if (debug.fd < 0) continue;
      ElfPtr debug_elf(elf_begin(debug.fd, ELF_C_READ_MMAP, nullptr));
      if (!debug_elf || elf_kind(debug_elf.get()) != ELF_K_ELF) continue;
      size_t before = image.symbols_.size();
      loader.ReadSymbols(debug_elf.get(), "debug file");
      if (image.symbols_.size() > before) break;
    }
  }
  loader.Finish();
  return image;
}

std::optional<ElfSymbol> ElfImage::FindSymbol(std::string_view name) const {
  for (const ElfSymbol& sym : symbols_) {
    if (sym.name == name) return sym;
  }
  return std::nullopt;
}

const ElfSymbol* ElfImage::SymbolAt(uint64_t address) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](uint64_t a, const ElfSymbol& s) { return a < s.address; });
  if (it == symbols_.begin()) return nullptr;
  const ElfSymbol& sym = *std::prev(it);
  if (sym.size > 0 && address >= sym.address + sym.size) return nullptr;
  if (sym.size == 0 && it == symbols_.end()) return nullptr;
  return &sym;
}

std::optional<uint64_t> ElfImage::AddressOfFileOffset(uint64_t offset) const {
  for (const ElfSegment& seg : segments_) {
    if (offset >= seg.file_offset && offset < seg.file_offset + seg.file_size) {
      return seg.address + (offset - seg.file_offset);
    }
  }
  return std::nullopt;
}

std::optional<uint64_t> ElfImage::FileOffsetOfAddress(uint64_t address) const {
  for (const ElfSegment& seg : segments_) {
    if (address >= seg.address && address < seg.address + seg.file_size) {
      return seg.file_offset + (address - seg.address);
    }
  }
  return std::nullopt;
}

bool ElfDefinesFunctions(const std::string& path, const std::vector<std::string_view>& names) {
  if (names.empty()) return true;
  if (elf_version(EV_CURRENT) == EV_NONE) return false;
  FdCloser file{open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) return false;
  ElfPtr elf(elf_begin(file.fd, ELF_C_READ_MMAP, nullptr));
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF) return false;
  std::vector<bool> found(names.size(), false);
  size_t missing = names.size();
  for (Elf_Scn* scn = elf_nextscn(elf.get(), nullptr); scn && missing > 0;
       scn = elf_nextscn(elf.get(), scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr ||
        (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM) || shdr.sh_entsize == 0) {
      continue;
    }
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr) continue;
    const size_t count = shdr.sh_size / shdr.sh_entsize;
    for (size_t i = 0; i < count && missing > 0; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr || !IsFunction(sym)) continue;
      const char* name = elf_strptr(elf.get(), shdr.sh_link, sym.st_name);
      if (name == nullptr) continue;
      std::string_view plain(name);
      if (size_t at = plain.find('@'); at != std::string_view::npos) plain = plain.substr(0, at);
      for (size_t n = 0; n < names.size(); ++n) {
        if (!found[n] && plain == names[n]) {
          found[n] = true;
          --missing;
        }
      }
    }
  }
  return missing == 0;
}

std::string Demangle(std::string_view name) {
  if (name.size() < 2 || name[0] != '_' || name[1] != 'Z') return std::string(name);
  std::string mangled(name);
  int status = 0;
  char* out = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) {
    std::free(out);
    return mangled;
  }
  std::string result(out);
  std::free(out);
  return result;
}

}  // namespace vigil
