// Metrics: counters, gauges and histograms rendered in the Prometheus text
// exposition format (version 0.0.4). Debian has no C++ Prometheus client,
// so this is the small part of one that npuzzle needs: metrics are
// registered once, updated lock-free (counters, gauges) or under a short
// lock (histograms), and families whose series are only known at scrape
// time (one per connected worker, say) are filled by a collector callback.
#ifndef NPUZZLE_COMMON_METRICS_H_
#define NPUZZLE_COMMON_METRICS_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace npuzzle {

// Label name/value pairs, in the order they are rendered.
using Labels = std::vector<std::pair<std::string, std::string>>;

class Counter {
 public:
  void Increment(double by = 1);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Add(double by);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Histogram {
 public:
  // `bounds`: the buckets' upper bounds, ascending; +Inf is implied.
  explicit Histogram(std::vector<double> bounds);
  void Observe(double v);

  struct Snapshot {
    std::vector<double> bounds;
    std::vector<uint64_t> cumulative;  // one per bound, then +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot Read() const;

 private:
  const std::vector<double> bounds_;
  mutable absl::Mutex mu_;
  std::vector<uint64_t> counts_ ABSL_GUARDED_BY(mu_);  // per bucket, not cumulative
  double sum_ ABSL_GUARDED_BY(mu_) = 0;
};

// One sample a collector reports for its family.
struct Sample {
  Labels labels;
  double value = 0;
};

class MetricsRegistry {
 public:
  MetricsRegistry() = default;
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  // The same name may be registered again with other labels; the series
  // share one family (and the first registration's help text). The
  // returned pointers live as long as the registry.
  Counter* AddCounter(const std::string& name, const std::string& help, const Labels& labels = {});
  Gauge* AddGauge(const std::string& name, const std::string& help, const Labels& labels = {});
  Histogram* AddHistogram(const std::string& name, const std::string& help, std::vector<double> bounds,
                          const Labels& labels = {});
  // A gauge family whose samples `collect` produces at every scrape.
  void AddCollectedGauge(const std::string& name, const std::string& help,
                         std::function<std::vector<Sample>()> collect);

  // Every family, in registration order, in the text exposition format.
  std::string Render() const;

 private:
  enum class Type { kCounter, kGauge, kHistogram };
  struct Series {
    Labels labels;
    std::unique_ptr<Counter> counter;
    std::unique_ptr<Gauge> gauge;
    std::unique_ptr<Histogram> histogram;
  };
  struct Family {
    std::string name;
    std::string help;
    Type type;
    std::vector<std::unique_ptr<Series>> series;
    std::function<std::vector<Sample>()> collect;
  };
  Family& FamilyFor(const std::string& name, const std::string& help, Type type) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Series& AddSeries(const std::string& name, const std::string& help, Type type, const Labels& labels);

  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<Family>> families_ ABSL_GUARDED_BY(mu_);
};

// Exponential bucket bounds: start, start*factor, ... (`count` of them).
std::vector<double> ExponentialBuckets(double start, double factor, int count);

}  // namespace npuzzle

#endif  // NPUZZLE_COMMON_METRICS_H_
