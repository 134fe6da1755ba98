// SPDX-License-Identifier: Apache-2.0
#include "profile/elf_data_symbol.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/file_util.h"

namespace vigil {
namespace {

struct ElfHandle {
  ScopedFd fd;
  Elf* elf = nullptr;
  ~ElfHandle() {
    if (elf != nullptr) {
      elf_end(elf);
    }
  }
};

Status OpenElf(const std::string& path, ElfHandle* h) {
  if (elf_version(EV_CURRENT) == EV_NONE) {
    return InternalError("libelf: version mismatch");
  }
  h->fd = ScopedFd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!h->fd.valid()) {
    return ErrnoStatus(errno, "open " + path);
  }
  h->elf = elf_begin(h->fd.get(), ELF_C_READ_MMAP, nullptr);
  if (h->elf == nullptr || elf_kind(h->elf) != ELF_K_ELF) {
    return InvalidArgumentError(path + ": not an ELF file");
  }
  return OkStatus();
}

}  // namespace

StatusOr<ElfDataSymbol> FindElfDataSymbol(const std::string& path, std::string_view name) {
  ElfHandle h;
  VIGIL_RETURN_IF_ERROR(OpenElf(path, &h));
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(h.elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr ||
        (shdr.sh_type != SHT_DYNSYM && shdr.sh_type != SHT_SYMTAB) || shdr.sh_entsize == 0) {
      continue;
    }
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr) {
      continue;
    }
    const size_t count = shdr.sh_size / shdr.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr || sym.st_shndx == SHN_UNDEF) {
        continue;
      }
      const char* sym_name = elf_strptr(h.elf, shdr.sh_link, sym.st_name);
      if (sym_name != nullptr && name == sym_name) {
        return ElfDataSymbol{sym.st_value, sym.st_size};
      }
    }
  }
  return NotFoundError(path + ": no symbol " + std::string(name));
}

StatusOr<ElfLoadInfo> ReadElfLoadInfo(const std::string& path) {
  ElfHandle h;
  VIGIL_RETURN_IF_ERROR(OpenElf(path, &h));
  GElf_Ehdr ehdr;
  if (gelf_getehdr(h.elf, &ehdr) == nullptr) {
    return InvalidArgumentError(path + ": no ELF header");
  }
  ElfLoadInfo info;
  info.is_dyn = ehdr.e_type == ET_DYN;
  size_t phnum = 0;
  elf_getphdrnum(h.elf, &phnum);
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(h.elf, static_cast<int>(i), &phdr) != nullptr && phdr.p_type == PT_LOAD) {
      info.first_vaddr = phdr.p_vaddr - phdr.p_offset;  // The vaddr of file offset 0.
      return info;
    }
  }
  return InvalidArgumentError(path + ": no PT_LOAD segment");
}

}  // namespace vigil
