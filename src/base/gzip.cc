// SPDX-License-Identifier: Apache-2.0
#include "base/gzip.h"

#include <zlib.h>

namespace vigil {

std::string Gzip(std::string_view in) {
  z_stream zs{};
  // 15 + 16: a gzip header and trailer rather than zlib's.
  deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  // deflateBound is enough for one Z_FINISH call; the slack covers the gzip header.
  std::string out(deflateBound(&zs, static_cast<uLong>(in.size())) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

StatusOr<std::string> Gunzip(std::string_view body, size_t max_bytes) {
  z_stream zs{};
  // 15 + 32: accept both gzip and zlib headers.
  if (inflateInit2(&zs, 15 + 32) != Z_OK) {
    return InternalError("gunzip: inflateInit2 failed");
  }
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  zs.avail_in = static_cast<uInt>(body.size());
  std::string out;
  char buf[64 << 10];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      return InvalidArgumentError("gunzip: corrupt or truncated body (zlib error " +
                                  std::to_string(rc) + ")");
    }
    // Checked before the append: the output never grows past the cap.
    const size_t produced = sizeof(buf) - zs.avail_out;
    if (out.size() + produced > max_bytes) {
      inflateEnd(&zs);
      return ResourceExhaustedError("gunzip: body inflates past " + std::to_string(max_bytes) +
                                    " bytes");
    }
    out.append(buf, produced);
    if (rc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) {
      inflateEnd(&zs);
      return InvalidArgumentError("gunzip: truncated body");
    }
  }
  inflateEnd(&zs);
  return out;
}

}  // namespace vigil
