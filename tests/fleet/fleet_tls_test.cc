// SPDX-License-Identifier: Apache-2.0
// vigil-fleet over TLS: the service serves HTTPS only when given a certificate, vigild's push
// sink delivers to it trusting a CA file, `vigil fleet report` reaches it trusting SSL_CERT_FILE,
// and the dashboard's API still demands a token. The certificate is made by the openssl command
// for 127.0.0.1 at test time.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/time_util.h"
#include "collectors/gpu_metrics.h"
#include "fleet/fleet_server.h"
#include "fleet/ledger_store.h"
#include "fleet_process.h"
#include "sinks/fleet_push_sink.h"

namespace vigil {
namespace {

namespace gm = gpu_metrics;  // The metric names vigild emits.

using nlohmann::json;
constexpr int64_t kSec = kNanosPerSecond;

class FleetTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("vigil-fleet-tls-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    cert_ = (dir_ / "cert.pem").string();
    key_ = (dir_ / "key.pem").string();
    const std::string cmd =
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
        "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout " +
        key_ + " -out " + cert_ + " >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) GTEST_SKIP() << "openssl cannot make a test certificate";
    ASSERT_TRUE(WriteFileAtomic((dir_ / "tokens").string(), "node01 secret-1\n* admin-2\n").ok());
    LedgerOptions lo;
    lo.path = (dir_ / "fleet.db").string();
    auto store = LedgerStore::Open(lo);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
  }
  void TearDown() override {
    if (server_) server_->Stop();
    std::filesystem::remove_all(dir_);
  }
  Status StartServer(std::string cert, std::string key) {
    FleetServerOptions o;
    o.port = 0;
    o.token_file = (dir_ / "tokens").string();
    o.tls_cert_file = std::move(cert);
    o.tls_key_file = std::move(key);
    server_ = std::make_unique<FleetServer>(o, store_.get());
    return server_->Start();
  }
  std::string Url() const { return "https://127.0.0.1:" + std::to_string(server_->port()); }

  std::filesystem::path dir_;
  std::string cert_, key_;
  std::unique_ptr<LedgerStore> store_;
  std::unique_ptr<FleetServer> server_;
};

TEST_F(FleetTlsTest, ServesHttpsOnlyAndVerifiesAgainstItsCertificate) {
  ASSERT_TRUE(StartServer(cert_, key_).ok());
  EXPECT_STREQ(server_->scheme(), "https");
  httplib::Client https(Url());
  https.set_ca_cert_path(cert_.c_str());
  auto ok = https.Get("/healthz");
  ASSERT_TRUE(ok) << httplib::to_string(ok.error());
  EXPECT_EQ(ok->status, 200);

  httplib::Client plain("127.0.0.1", server_->port());
  plain.set_read_timeout(std::chrono::seconds(2));
  auto refused = plain.Get("/healthz");
  EXPECT_TRUE(!refused || refused->status != 200) << "plain HTTP must not be served";

  httplib::Client untrusting(Url());  // The system's CAs do not know this certificate.
  untrusting.set_ca_cert_path((dir_ / "tokens").string().c_str());
  EXPECT_FALSE(untrusting.Get("/healthz"));

  // Reads still need a token over TLS.
  auto no_token = https.Get("/api/v1/hosts");
  ASSERT_TRUE(no_token);
  EXPECT_EQ(no_token->status, 401);
  auto with_token = https.Get("/api/v1/hosts", {{"Authorization", "Bearer admin-2"}});
  ASSERT_TRUE(with_token);
  EXPECT_EQ(with_token->status, 200) << with_token->body;
}

TEST_F(FleetTlsTest, BadCertificateOrKeyIsAClearError) {
  Status missing = StartServer(cert_, (dir_ / "nope.pem").string());
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("nope.pem"), std::string::npos) << missing.ToString();

  ASSERT_TRUE(WriteFileAtomic((dir_ / "junk.pem").string(), "not a key\n").ok());
  Status junk = StartServer(cert_, (dir_ / "junk.pem").string());
  EXPECT_FALSE(junk.ok());
  EXPECT_NE(junk.message().find("junk.pem"), std::string::npos) << junk.ToString();

  Status half = StartServer(cert_, "");
  EXPECT_FALSE(half.ok());
  EXPECT_NE(half.message().find("both"), std::string::npos) << half.ToString();
}

TEST_F(FleetTlsTest, PushSinkDeliversOverHttpsAndTheCliReportsIt) {
  ASSERT_TRUE(StartServer(cert_, key_).ok());
  FleetPushSinkOptions o;
  o.url = Url();
  o.host = "node01";
  o.token = "secret-1";
  o.ca_file = cert_;
  o.spool_dir = (dir_ / "spool").string();
  o.linger_ns = 0;
  auto sink = FleetPushSink::Create(o);
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();

  const int64_t now_s = UnixNanos() / kSec;
  const int64_t t0 = (now_s - now_s % 3600 - 3600) * kSec;
  for (int i = 0; i <= 6; ++i) {
    auto b = std::make_shared<MetricBatch>();
    MetricWriter w(b.get());
    b->time_ns = t0 + i * 10 * kSec;
    w.Add(gm::kUp, 1, {{"gpu_model", "H100"}, {"gpu_uuid", "G1"}});
    w.Add(gm::kAllocated, 10.0 * i,
          {{"gpu_uuid", "G1"},
           {"job_id", "A"},
           {"model", "m"},
           {"rule", "env"},
           {"team", "team-tls"},
           {"user", "u"}});
    (*sink)->Consume(b);
  }
  (*sink)->Flush(30 * kSec);
  EXPECT_EQ((*sink)->stats().spooled_batches, 0u) << (*sink)->stats().send_failures;
  (*sink)->Stop();

  httplib::Client https(Url());
  https.set_ca_cert_path(cert_.c_str());
  auto res =
      https.Get("/api/v1/attribution?by=team&since=7d", {{"Authorization", "Bearer admin-2"}});
  ASSERT_TRUE(res && res->status == 200);
  const json a = json::parse(res->body);
  ASSERT_FALSE(a["rows"].empty()) << a.dump();
  EXPECT_EQ(a["rows"][0]["key"], "team-tls");
  EXPECT_NEAR(a["rows"][0]["allocated_gpu_hours"].get<double>() * 3600, 60.0, 1e-6);

  const std::string vigil = std::string(VIGIL_BIN_DIR) + "/vigil";
  if (access(vigil.c_str(), X_OK) != 0) GTEST_SKIP() << "vigil CLI not built";
  ASSERT_TRUE(WriteFileAtomic((dir_ / "cli-token").string(), "admin-2\n").ok());
  ASSERT_EQ(setenv("SSL_CERT_FILE", cert_.c_str(), 1), 0);
  std::string out;
  const int code =
      fleet_test::RunCapture({vigil, "fleet", "report", "--fleet", Url(), "--fleet-token-file",
                              (dir_ / "cli-token").string(), "--by", "team", "--format", "csv"},
                             &out);
  unsetenv("SSL_CERT_FILE");
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("team-tls"), std::string::npos) << out;
}

}  // namespace
}  // namespace vigil
