// One hard job on one worker, and the same job spread over several
// (JobSpec.max_workers), against real coordinators with local workers on
// loopback: one with a single worker, one with --workers. For each of
// Korf's instances in --ids (IDA*, Manhattan distance by default): wall time
// from submission to the final result and nodes expanded, for the job on
// one worker with one search thread, the split job (max_workers
// --workers) on that one worker, the job on one worker with --workers
// threads, and the split job over --workers workers; the median of
// --repeats runs of each (interleaved, so all see the same machine), and
// each as a fraction of the first; and the coordinator's CPU time per
// run, which for a split job is what its units cost the coordinator. The split job on one worker searches
// the same units in the same order as over several, so their ratio is the
// split's own speedup; against the plain job it also includes the
// pruning machine, which a split job uses from its first unit and a plain
// one only after 5 M nodes, and the last threshold's luck (a job stops
// when a unit finds the solution, and units go out in another order).
//
//   split_bench [--ids 17,53] [--workers 2] [--repeats 3]
//   split_bench --file korf-taylor-24.txt --side 5 --heuristic pdb
//     --pdb_preset 6-6-6-6 --tables_dir ~/.cache/npuzzle/pdb --ids 1 --repeats 1
//   (the second line continues the first)
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "bench/bench_util.h"
#include "jobspec/job_spec.h"
#include "tests/util/http_get.h"
#include "tests/util/service_harness.h"

ABSL_FLAG(std::vector<std::string>, ids, std::vector<std::string>({"17", "53"}), "Korf 15-puzzle instances to run");
ABSL_FLAG(int, workers, 2, "local workers, and the split job's max_workers");
ABSL_FLAG(int, repeats, 3, "runs of each kind");
ABSL_FLAG(std::string, file, "korf100.txt", "instances, under tests/data");
ABSL_FLAG(int, side, 4, "the instances' board side");
ABSL_FLAG(std::string, heuristic, "manhattan", "the jobs' heuristic");
ABSL_FLAG(std::string, pdb_preset, "", "the jobs' pattern-database preset (--heuristic pdb)");
ABSL_FLAG(std::string, tables_dir, "",
          "pattern tables the workers load (linked as their data directory's pdb/), instead of building them");

namespace npuzzle::bench {
namespace {

struct Run {
  double seconds = 0;
  double expanded = 0;
  int length = 0;
  int units = 0;
  int handed_back = 0;         // of those units
  double coordinator_cpu = 0;  // seconds
};

// Units made of what running units handed back, by the coordinator so far.
int HandedBack(const testing::Coordinator& c) {
  absl::StatusOr<testing::HttpResponse> page = testing::HttpGet("127.0.0.1", c.metrics_port(), "/metrics");
  if (!page.ok()) return 0;
  return static_cast<int>(testing::MetricValue(page->body, "npuzzle_split_units_handed_back_total").value_or(0));
}

// A process's user and system CPU time so far, from /proc.
double CpuSeconds(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The fields after the command name (which may hold spaces) start with
  // the state, field 3; utime and stime are fields 14 and 15.
  const std::vector<std::string> fields = absl::StrSplit(stat.substr(stat.rfind(')') + 2), ' ');
  return (std::stod(fields[11]) + std::stod(fields[12])) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::optional<Run> RunJob(testing::Coordinator& c, const v1::JobSpec& spec) {
  const double cpu = CpuSeconds(c.process()->pid());
  const int handed_back = HandedBack(c);
  const absl::Time start = absl::Now();
  absl::StatusOr<v1::Job> job = testing::Submit(c.stub(), spec);
  if (!job.ok()) return std::nullopt;
  const testing::Watched w = testing::WatchToEnd(c.stub(), job->id(), absl::Hours(2));
  const v1::Job* done = w.final_job();
  if (done == nullptr || done->result().status() != "solved") return std::nullopt;
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return Run{seconds,
             static_cast<double>(done->result().stats().expanded()),
             done->result().length(),
             done->result().stats().work_units(),
             HandedBack(c) - handed_back,
             CpuSeconds(c.process()->pid()) - cpu};
}

int Main() {
  const int workers = absl::GetFlag(FLAGS_workers);
  testing::TempDir one_dir, many_dir;
  testing::Coordinator one_worker(one_dir, 1);
  testing::Coordinator many_workers(many_dir, workers);
  if (const std::string tables = absl::GetFlag(FLAGS_tables_dir); !tables.empty()) {
    for (const testing::Coordinator* c : {&one_worker, &many_workers}) {
      std::filesystem::create_directories(c->data_dir());
      std::filesystem::create_directory_symlink(tables, c->data_dir() + "/pdb");
    }
  }
  one_worker.Start();
  many_workers.Start();
  std::vector<KorfInstance> korf = LoadKorfInstances(absl::GetFlag(FLAGS_file), absl::GetFlag(FLAGS_side));
  std::vector<double> vs_plain, vs_split_on_one, cpu_per_unit;
  std::cout << absl::StrFormat("%-8s %-6s %-26s %10s %14s %6s %12s %8s %14s\n", "instance", "length", "run", "seconds",
                               "expanded", "units", "handed back", "vs first", "coordinator s");
  for (const std::string& id : absl::GetFlag(FLAGS_ids)) {
    const KorfInstance& k = korf.at(std::stoi(id) - 1);
    v1::JobSpec one = testing::SpecFor(k.start.ToString(), "blank-first", "idastar", absl::GetFlag(FLAGS_heuristic));
    one.set_pdb_preset(absl::GetFlag(FLAGS_pdb_preset));
    one.mutable_limits()->set_max_time_ms(4 * 3600 * 1000);
    one.mutable_limits()->set_max_memory_mb(8192);
    one.set_threads(1);
    v1::JobSpec threaded = one;
    threaded.set_threads(workers);
    v1::JobSpec split = one;
    split.set_max_workers(workers);
    struct Kind {
      std::string name;
      testing::Coordinator* where;
      v1::JobSpec spec;
    };
    const std::vector<Kind> kinds = {{"one worker, 1 thread", &one_worker, one},
                                     {"split, on one worker", &one_worker, split},
                                     {absl::StrFormat("one worker, %d threads", workers), &many_workers, threaded},
                                     {absl::StrFormat("split over %d workers", workers), &many_workers, split}};
    std::vector<std::vector<double>> seconds(kinds.size()), expanded(kinds.size()), cpu(kinds.size());
    std::vector<int> units(kinds.size()), handed_back(kinds.size());
    for (int r = 0; r < absl::GetFlag(FLAGS_repeats); ++r) {
      for (size_t i = 0; i < kinds.size(); ++i) {
        std::optional<Run> run = RunJob(*kinds[i].where, kinds[i].spec);
        if (!run || run->length != k.optimal_length) {
          std::cerr << "instance " << id << ": " << kinds[i].name << " did not answer the optimal length\n";
          return 1;
        }
        seconds[i].push_back(run->seconds);
        expanded[i].push_back(run->expanded);
        units[i] = run->units;
        handed_back[i] = run->handed_back;
        cpu[i].push_back(run->coordinator_cpu);
      }
    }
    for (size_t i = 0; i < kinds.size(); ++i) {
      std::cout << absl::StrFormat("%-8s %-6d %-26s %10.2f %14.0f %6d %12d %7.2fx %14.3f\n", id, k.optimal_length,
                                   kinds[i].name, Median(seconds[i]), Median(expanded[i]), units[i], handed_back[i],
                                   Median(seconds[i]) / Median(seconds[0]), Median(cpu[i]));
    }
    vs_plain.push_back(Median(seconds[3]) / Median(seconds[0]));
    vs_split_on_one.push_back(Median(seconds[3]) / Median(seconds[1]));
    cpu_per_unit.push_back(Median(cpu[3]) / std::max(1, units[3]));
  }
  std::cout << absl::StrFormat(
      "split over %d workers, median over instances: %.2fx the split job on one worker, %.2fx the plain job; "
      "coordinator CPU %.0f us per unit\n",
      workers, Median(vs_split_on_one), Median(vs_plain), 1e6 * Median(cpu_per_unit));
  return 0;
}

}  // namespace
}  // namespace npuzzle::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return npuzzle::bench::Main();
}
