// SPDX-License-Identifier: Apache-2.0
// The roofline's JSON object, text lines and HTML chart for a rank with a hand-made work model:
// one 1024^3 BF16 GEMM on an H100 SXM, 2170.49 ns of roofline time over 4 us of kernels
// (54.26 %), and a 2 us unmodelled kernel: 6 us replayed, 12 us wall.
#include "trace/report/roofline_report.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "trace/analysis/roofline.h"
#include "trace/report/json_writer.h"
#include "trace/testing/analysed_ranks.h"

namespace vigil::trace {
namespace {

std::optional<OpWork> Gemm(std::string_view name, const OpInputs& in) {
  if (name != "aten::mm" || in.dims.size() < 2 || in.dims[0].size() != 2) return std::nullopt;
  const double m = in.dims[0][0], k = in.dims[0][1], n = in.dims[1][1];
  return OpWork{"GEMM", 2 * m * n * k, (m * k + k * n + m * n) * 2, ComputeSpec::kMatrixBf16};
}

std::unique_ptr<testing::Analysed> GemmAndRelu() {
  testing::TraceBuilder b;
  b.TopLevel(R"("deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}])");
  b.Cpu("user_annotation", "ProfilerStep#3", 0, 50);
  b.Cpu("cpu_op", "aten::mm", 1, 9, 1,
        R"("Input Dims": [[1024, 1024], [1024, 1024]], "Input type": ["c10::BFloat16", )"
        R"("c10::BFloat16"])");
  b.Launch("cudaLaunchKernel", 2, 0.5, 1).Gpu("kernel", "gemm", 20, 4, 1);
  b.Cpu("cpu_op", "aten::relu", 11, 2, 1);
  b.Launch("cudaLaunchKernel", 12, 0.5, 2).Gpu("kernel", "relu", 30, 2, 2);
  auto a = testing::AnalyseRanks({b});
  RankReport& r = a->report.ranks[0];
  r.roofline = AnalyzeRoofline(a->traces[0], r.view, Gemm);
  return a;
}

TEST(RooflineReportTest, JsonCarriesRankStepAndOperatorFigures) {
  auto a = GemmAndRelu();
  JsonWriter w;
  w.BeginObject();
  WriteRooflineJson(a->rank(), &w);
  w.EndObject();
  const nlohmann::json j = nlohmann::json::parse(w.str())["roofline"];
  EXPECT_EQ(j["gpu_model"], "H100 SXM");
  EXPECT_EQ(j["main_peak"], "matrix_bf16");
  EXPECT_NEAR(j["pct_of_replayed"].get<double>(), 100 * 2170.49 / 6000, 0.01);
  EXPECT_NEAR(j["pct_of_wall"].get<double>(), 100 * 2170.49 / 12000, 0.01);
  EXPECT_NEAR(j["coverage"].get<double>(), 4.0 / 6, 1e-6);  // six significant digits
  EXPECT_EQ(j["replayed_us"].get<double>(), 6);
  EXPECT_EQ(j["roofline_us"].get<double>(), 2.170);
  ASSERT_EQ(j["steps"].size(), 1u);
  EXPECT_EQ(j["steps"][0]["step"], 3);
  ASSERT_EQ(j["operators"].size(), 1u);
  const nlohmann::json& op = j["operators"][0];
  EXPECT_EQ(op["name"], "aten::mm");
  EXPECT_EQ(op["category"], "GEMM");
  EXPECT_EQ(op["input_dims"], "[[1024, 1024], [1024, 1024]]");
  EXPECT_EQ(op["bound"], "compute");
  EXPECT_NEAR(op["achieved_pct"].get<double>(), 54.26, 0.01);
  EXPECT_NEAR(op["arithmetic_intensity"].get<double>(), 341.33, 0.01);
}

TEST(RooflineReportTest, TextAndHtml) {
  auto a = GemmAndRelu();
  std::string text;
  RenderRooflineText(a->rank(), &text);
  EXPECT_NE(text.find("36.2% of the replayed device time (18.1% of wall), 67% of kernel time "
                      "modelled"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("H100 SXM matrix_bf16 989.4 TFLOP/s, memory 3.35 TB/s"), std::string::npos)
      << text;
  const std::string html = HtmlRoofline(a->rank());
  EXPECT_NE(html.find("<h3>Roofline</h3>"), std::string::npos);
  EXPECT_EQ(html.find("<circle"), html.rfind("<circle"));  // one operator shape, one point
  EXPECT_NE(html.find("<circle"), std::string::npos);
  EXPECT_NE(html.find("<polyline"), std::string::npos);  // the two roofs
  EXPECT_NE(html.find("54.3% of roofline (compute)"), std::string::npos) << html;
  // Turned off: nothing is written.
  a->report.ranks[0].roofline = Roofline();
  text.clear();
  RenderRooflineText(a->rank(), &text);
  EXPECT_TRUE(text.empty());
  EXPECT_TRUE(HtmlRoofline(a->rank()).empty());
}

}  // namespace
}  // namespace vigil::trace
