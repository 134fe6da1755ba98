// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "trace/report/roofline_report.h"

namespace vigil::trace {

void RenderRooflineText(const RankReport& r, std::string* out) {
  const Roofline& x = r.roofline;
  if (!x.computed || x.rank.kernels == 0) return;
  const RooflineTotals& t = x.rank;
  const double covered = 100.0 * t.Coverage();
  if (t.modelled_kernels == 0) {
    *out +=
        "  roofline: no kernel has a work model (needs a trace taken with record_shapes=True"
        " and modelled operators)\n";
    return;
  }
  if (!t.has_peaks) {
    *out += fmt::format("  roofline: GPU not in the peak table; {:.0f}% of kernel time modelled\n",
                        covered);
    return;
  }
  *out += fmt::format(
      "  roofline: {:.1f}% of the replayed device time ({:.1f}% of wall), {:.0f}% of kernel "
      "time modelled\n",
      t.PctOfReplayed(), t.PctOfWall(), covered);
  *out +=
      fmt::format("    peaks: {} {} {:.4g} TFLOP/s, memory {:.3g} TB/s\n", x.gpu_model, x.main_peak,
                  x.main_peak_flops_per_s / 1e12, x.memory_bandwidth_bytes_per_s / 1e12);
}

}  // namespace vigil::trace
