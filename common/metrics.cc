#include "common/metrics.h"

#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace npuzzle {
namespace {

void AtomicAdd(std::atomic<double>& a, double by) {
  double old = a.load(std::memory_order_relaxed);
  while (!a.compare_exchange_weak(old, old + by, std::memory_order_relaxed)) {
  }
}

// Shortest text that reads back as the same double, as Prometheus parses it.
std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, end);
}

std::string Escape(const std::string& s, bool quotes) {
  std::string out;
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quotes) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

std::string LabelText(const Labels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    absl::StrAppend(&out, i ? "," : "", labels[i].first, "=\"", Escape(labels[i].second, true), "\"");
  }
  return out + "}";
}

void AppendSample(std::string* out, const std::string& name, const Labels& labels, double value) {
  absl::StrAppend(out, name, LabelText(labels), " ", FormatValue(value), "\n");
}

}  // namespace

void Counter::Increment(double by) {
  if (by > 0) AtomicAdd(value_, by);  // counters never go down
}

void Gauge::Add(double by) { AtomicAdd(value_, by); }

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::Observe(double v) {
  size_t bucket = 0;
  while (bucket < bounds_.size() && v > bounds_[bucket]) ++bucket;
  absl::MutexLock lock(&mu_);
  ++counts_[bucket];
  sum_ += v;
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot s;
  s.bounds = bounds_;
  absl::MutexLock lock(&mu_);
  uint64_t running = 0;
  for (uint64_t c : counts_) {
    running += c;
    s.cumulative.push_back(running);
  }
  s.count = running;
  s.sum = sum_;
  return s;
}

MetricsRegistry::Family& MetricsRegistry::FamilyFor(const std::string& name, const std::string& help, Type type) {
  for (auto& f : families_) {
    if (f->name == name) return *f;
  }
  families_.push_back(std::make_unique<Family>(Family{name, help, type, {}, nullptr}));
  return *families_.back();
}

MetricsRegistry::Series& MetricsRegistry::AddSeries(const std::string& name, const std::string& help, Type type,
                                                    const Labels& labels) {
  absl::MutexLock lock(&mu_);
  Family& f = FamilyFor(name, help, type);
  f.series.push_back(std::make_unique<Series>());
  f.series.back()->labels = labels;
  return *f.series.back();
}

Counter* MetricsRegistry::AddCounter(const std::string& name, const std::string& help, const Labels& labels) {
  Series& s = AddSeries(name, help, Type::kCounter, labels);
  s.counter = std::make_unique<Counter>();
  return s.counter.get();
}

Gauge* MetricsRegistry::AddGauge(const std::string& name, const std::string& help, const Labels& labels) {
  Series& s = AddSeries(name, help, Type::kGauge, labels);
  s.gauge = std::make_unique<Gauge>();
  return s.gauge.get();
}

Histogram* MetricsRegistry::AddHistogram(const std::string& name, const std::string& help, std::vector<double> bounds,
                                         const Labels& labels) {
  Series& s = AddSeries(name, help, Type::kHistogram, labels);
  s.histogram = std::make_unique<Histogram>(std::move(bounds));
  return s.histogram.get();
}

void MetricsRegistry::AddCollectedGauge(const std::string& name, const std::string& help,
                                        std::function<std::vector<Sample>()> collect) {
  absl::MutexLock lock(&mu_);
  FamilyFor(name, help, Type::kGauge).collect = std::move(collect);
}

std::string MetricsRegistry::Render() const {
  // Collectors run outside the lock: they take their owners' locks, and an
  // owner may be registering a metric at the same moment.
  struct Block {
    std::string name;
    std::string text;
    std::function<std::vector<Sample>()> collect;
  };
  std::vector<Block> blocks;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& f : families_) {
      const char* type = f->type == Type::kCounter ? "counter" : f->type == Type::kGauge ? "gauge" : "histogram";
      std::string text =
          absl::StrCat("# HELP ", f->name, " ", Escape(f->help, false), "\n# TYPE ", f->name, " ", type, "\n");
      for (const auto& s : f->series) {
        if (s->counter) AppendSample(&text, f->name, s->labels, s->counter->Value());
        if (s->gauge) AppendSample(&text, f->name, s->labels, s->gauge->Value());
        if (s->histogram) {
          const Histogram::Snapshot h = s->histogram->Read();
          for (size_t i = 0; i < h.cumulative.size(); ++i) {
            Labels labels = s->labels;
            labels.emplace_back("le", i < h.bounds.size() ? FormatValue(h.bounds[i]) : "+Inf");
            AppendSample(&text, f->name + "_bucket", labels, static_cast<double>(h.cumulative[i]));
          }
          AppendSample(&text, f->name + "_sum", s->labels, h.sum);
          AppendSample(&text, f->name + "_count", s->labels, static_cast<double>(h.count));
        }
      }
      blocks.push_back({f->name, std::move(text), f->collect});
    }
  }
  std::string out;
  for (const Block& b : blocks) {
    out += b.text;
    if (!b.collect) continue;
    for (const Sample& sample : b.collect()) AppendSample(&out, b.name, sample.labels, sample.value);
  }
  return out;
}

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  std::vector<double> bounds;
  for (double b = start; static_cast<int>(bounds.size()) < count; b *= factor) bounds.push_back(b);
  return bounds;
}

}  // namespace npuzzle
