// Metrics with prometheus-cpp: a process's counters, gauges and histograms
// live in a prometheus::Registry; gauge families whose series are only
// known at scrape time (one per connected worker, say) are callbacks in a
// CollectedGauges. Render() gives both in the text exposition format.
#ifndef NPUZZLE_COMMON_METRICS_H_
#define NPUZZLE_COMMON_METRICS_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "prometheus/collectable.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/metric_family.h"
#include "prometheus/registry.h"

namespace npuzzle {

// Label name/value pairs, rendered in this order.
using Labels = std::vector<std::pair<std::string, std::string>>;

// One series a collected family reports at a scrape.
struct Sample {
  Labels labels;
  double value = 0;
};

// Gauge families read at every scrape. Families are added while the
// owner is built, before anything scrapes; Collect may then run on any
// thread.
class CollectedGauges : public prometheus::Collectable {
 public:
  void Add(std::string name, std::string help, std::function<std::vector<Sample>()> collect);
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  struct Family {
    std::string name;
    std::string help;
    std::function<std::vector<Sample>()> collect;
  };
  std::vector<Family> families_;
};

// Everything one process exports. The same name may be added again with
// other labels: the series share one family. Returned pointers live as long
// as this does.
class Metrics {
 public:
  prometheus::Counter* AddCounter(const std::string& name, const std::string& help, const Labels& labels = {});
  prometheus::Gauge* AddGauge(const std::string& name, const std::string& help, const Labels& labels = {});
  prometheus::Histogram* AddHistogram(const std::string& name, const std::string& help,
                                      const prometheus::Histogram::BucketBoundaries& bounds);
  void AddCollectedGauge(std::string name, std::string help, std::function<std::vector<Sample>()> collect) {
    collected_.Add(std::move(name), std::move(help), std::move(collect));
  }

  // Everything, in the text exposition format (version 0.0.4).
  std::string Render() const;

 private:
  prometheus::Registry registry_;
  CollectedGauges collected_;
};

// Exponential bucket bounds: start, start*factor, ... (`count` of them).
prometheus::Histogram::BucketBoundaries ExponentialBuckets(double start, double factor, int count);

}  // namespace npuzzle

#endif  // NPUZZLE_COMMON_METRICS_H_
