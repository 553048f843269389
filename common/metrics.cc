#include "common/metrics.h"

#include "prometheus/text_serializer.h"

namespace npuzzle {

void CollectedGauges::Add(std::string name, std::string help, std::function<std::vector<Sample>()> collect) {
  families_.push_back({std::move(name), std::move(help), std::move(collect)});
}

std::vector<prometheus::MetricFamily> CollectedGauges::Collect() const {
  std::vector<prometheus::MetricFamily> out;
  for (const Family& f : families_) {
    prometheus::MetricFamily family{f.name, f.help, prometheus::MetricType::Gauge, {}};
    for (const Sample& s : f.collect()) {
      prometheus::ClientMetric metric;
      for (const auto& [name, value] : s.labels) metric.label.push_back({name, value});
      metric.gauge.value = s.value;
      family.metric.push_back(std::move(metric));
    }
    out.push_back(std::move(family));
  }
  return out;
}

namespace {

prometheus::Labels LabelMap(const Labels& labels) { return prometheus::Labels(labels.begin(), labels.end()); }

}  // namespace

prometheus::Counter* Metrics::AddCounter(const std::string& name, const std::string& help, const Labels& labels) {
  return &prometheus::BuildCounter().Name(name).Help(help).Register(registry_).Add(LabelMap(labels));
}

prometheus::Gauge* Metrics::AddGauge(const std::string& name, const std::string& help, const Labels& labels) {
  return &prometheus::BuildGauge().Name(name).Help(help).Register(registry_).Add(LabelMap(labels));
}

prometheus::Histogram* Metrics::AddHistogram(const std::string& name, const std::string& help,
                                             const prometheus::Histogram::BucketBoundaries& bounds) {
  return &prometheus::BuildHistogram().Name(name).Help(help).Register(registry_).Add({}, bounds);
}

std::string Metrics::Render() const {
  std::vector<prometheus::MetricFamily> families = registry_.Collect();
  for (prometheus::MetricFamily& f : collected_.Collect()) families.push_back(std::move(f));
  return prometheus::TextSerializer().Serialize(families);
}

prometheus::Histogram::BucketBoundaries ExponentialBuckets(double start, double factor, int count) {
  prometheus::Histogram::BucketBoundaries bounds;
  for (double b = start; count-- > 0; b *= factor) bounds.push_back(b);
  return bounds;
}

}  // namespace npuzzle
