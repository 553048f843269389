// Metrics on prometheus-cpp (families shared by name, gauges collected at
// scrape time) and the HTTP endpoint that serves them.
#include "common/metrics.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "common/metrics_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/util/http_get.h"

namespace npuzzle {
namespace {

using ::testing::HasSubstr;
using testing::HttpGet;
using testing::MetricValue;

TEST(Metrics, OneFamilyPerNameWithHelpTypeAndLabels) {
  Metrics r;
  prometheus::Counter* done = r.AddCounter("jobs_total", "jobs ended", {{"state", "done"}});
  prometheus::Counter* failed = r.AddCounter("jobs_total", "jobs ended", {{"state", "failed"}});
  prometheus::Gauge* depth = r.AddGauge("queue_depth", "waiting");
  done->Increment(3);
  failed->Increment();
  depth->Set(7);
  depth->Decrement(2);
  const std::string text = r.Render();
  EXPECT_THAT(text, HasSubstr("# HELP jobs_total jobs ended\n# TYPE jobs_total counter\n"));
  EXPECT_EQ(text.find("# HELP jobs_total"), text.rfind("# HELP jobs_total")) << "one family: " << text;
  EXPECT_EQ(MetricValue(text, "jobs_total{state=\"done\"}"), 3);
  EXPECT_EQ(MetricValue(text, "jobs_total{state=\"failed\"}"), 1);
  EXPECT_THAT(text, HasSubstr("# TYPE queue_depth gauge\nqueue_depth 5\n"));
}

TEST(Metrics, CountersNeverGoDown) {
  Metrics r;
  prometheus::Counter* c = r.AddCounter("c", "c");
  c->Increment(2);
  c->Increment(-5);
  EXPECT_EQ(c->Value(), 2);
}

// Worker ids and tenants come from outside.
TEST(Metrics, EscapesLabelValues) {
  Metrics r;
  r.AddGauge("g", "a gauge", {{"worker", "a\"b\\c\nd"}})->Set(1);
  r.AddCollectedGauge("h", "collected", [] { return std::vector<Sample>{{{{"tenant", "x\"y"}}, 2}}; });
  const std::string text = r.Render();
  EXPECT_THAT(text, HasSubstr("g{worker=\"a\\\"b\\\\c\\nd\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("h{tenant=\"x\\\"y\"} 2\n"));
}

TEST(Metrics, LargeCountsKeepEveryDigit) {
  Metrics r;
  r.AddCounter("nodes_total", "n")->Increment(202900000123.0);
  r.AddGauge("rate", "r")->Set(0.25);
  const std::string text = r.Render();
  EXPECT_THAT(text, HasSubstr("nodes_total 202900000123\n"));
  EXPECT_THAT(text, HasSubstr("rate 0.25\n"));
}

TEST(Metrics, HistogramBucketsAreCumulative) {
  Metrics r;
  prometheus::Histogram* h = r.AddHistogram("latency_seconds", "l", {0.01, 0.1, 1});
  for (double v : {0.005, 0.01, 0.05, 0.5, 3.0}) h->Observe(v);
  const std::string text = r.Render();
  EXPECT_THAT(text, HasSubstr("# TYPE latency_seconds histogram\n"));
  EXPECT_EQ(MetricValue(text, "latency_seconds_bucket{le=\"0.01\"}"), 2);  // le is inclusive
  EXPECT_EQ(MetricValue(text, "latency_seconds_bucket{le=\"0.1\"}"), 3);
  EXPECT_EQ(MetricValue(text, "latency_seconds_bucket{le=\"1\"}"), 4);
  EXPECT_EQ(MetricValue(text, "latency_seconds_bucket{le=\"+Inf\"}"), 5);
  EXPECT_EQ(MetricValue(text, "latency_seconds_count"), 5);
  EXPECT_NEAR(*MetricValue(text, "latency_seconds_sum"), 3.565, 1e-9);
}

TEST(Metrics, CollectedGaugesAreReadAtEveryScrape) {
  Metrics r;
  int workers = 1;
  r.AddCollectedGauge("free_slots", "per worker", [&] {
    std::vector<Sample> samples;
    for (int i = 0; i < workers; ++i) samples.push_back({{{"worker", absl::StrCat("w", i)}}, i + 0.5});
    return samples;
  });
  EXPECT_EQ(MetricValue(r.Render(), "free_slots{worker=\"w0\"}"), 0.5);
  EXPECT_EQ(MetricValue(r.Render(), "free_slots{worker=\"w1\"}"), std::nullopt);
  workers = 2;
  EXPECT_EQ(MetricValue(r.Render(), "free_slots{worker=\"w1\"}"), 1.5);
}

TEST(Metrics, CollectedLabelsKeepTheirOrder) {
  Metrics r;
  r.AddCollectedGauge("tenant_jobs", "t", [] {
    return std::vector<Sample>{{{{"tenant", "a"}, {"state", "queued"}}, 4}};
  });
  EXPECT_EQ(MetricValue(r.Render(), "tenant_jobs{tenant=\"a\",state=\"queued\"}"), 4);
}

TEST(Metrics, ExponentialBuckets) {
  EXPECT_THAT(ExponentialBuckets(0.001, 10, 4),
              ::testing::ElementsAre(0.001, 0.01, 0.1, ::testing::DoubleNear(1, 1e-12)));
}

TEST(MetricsServer, ServesTheRegistryOverHttp) {
  Metrics r;
  prometheus::Counter* c = r.AddCounter("scrapes_seen_total", "s");
  absl::StatusOr<std::unique_ptr<MetricsServer>> server =
      MetricsServer::Start("127.0.0.1:0", {[&r] { return r.Render(); }, nullptr});
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  ASSERT_GT(port, 0);
  c->Increment(41);
  absl::StatusOr<testing::HttpResponse> got = HttpGet("127.0.0.1", port, "/metrics");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->code, 200);
  EXPECT_THAT(got->content_type, HasSubstr("text/plain; version=0.0.4"));
  EXPECT_EQ(MetricValue(got->body, "scrapes_seen_total"), 41);

  EXPECT_EQ(HttpGet("127.0.0.1", port, "/healthz")->code, 200);
  EXPECT_EQ(HttpGet("127.0.0.1", port, "/readyz")->code, 200);
  EXPECT_EQ(HttpGet("127.0.0.1", port, "/nothing")->code, 404);
}

TEST(MetricsServer, ReadyzFollowsTheProgram) {
  Metrics r;
  std::atomic<bool> ready = false;
  auto server = MetricsServer::Start("127.0.0.1:0", {[&r] { return r.Render(); }, [&ready] { return ready.load(); }});
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ(HttpGet("127.0.0.1", (*server)->port(), "/readyz")->code, 503);
  EXPECT_EQ(HttpGet("127.0.0.1", (*server)->port(), "/healthz")->code, 200);
  ready = true;
  EXPECT_EQ(HttpGet("127.0.0.1", (*server)->port(), "/readyz")->code, 200);
}

TEST(MetricsServer, ConcurrentScrapesWhileUpdating) {
  Metrics r;
  prometheus::Counter* c = r.AddCounter("ticks_total", "t");
  auto server = MetricsServer::Start("127.0.0.1:0", {[&r] { return r.Render(); }, nullptr});
  ASSERT_TRUE(server.ok());
  std::atomic<bool> stop = false;
  std::thread writer([&] {
    while (!stop) c->Increment();
  });
  double last = -1;
  for (int i = 0; i < 50; ++i) {
    auto got = HttpGet("127.0.0.1", (*server)->port(), "/metrics");
    ASSERT_TRUE(got.ok());
    const double v = MetricValue(got->body, "ticks_total").value_or(-2);
    EXPECT_GE(v, last);
    last = v;
  }
  stop = true;
  writer.join();
}

TEST(MetricsServer, NamesABadAddress) {
  Metrics r;
  auto bad = MetricsServer::Start("nonsense", {[&r] { return r.Render(); }, nullptr});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("nonsense"));
  auto first = MetricsServer::Start("127.0.0.1:0", {[&r] { return r.Render(); }, nullptr});
  ASSERT_TRUE(first.ok());
  auto clash =
      MetricsServer::Start(absl::StrCat("127.0.0.1:", (*first)->port()), {[&r] { return r.Render(); }, nullptr});
  ASSERT_FALSE(clash.ok());
  EXPECT_THAT(clash.status().message(), HasSubstr("in use"));
}

}  // namespace
}  // namespace npuzzle
