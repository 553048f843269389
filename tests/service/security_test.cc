// The service's doors, end to end with real processes: TLS on both ports
// with certificates made here by scripts/make-certs (openssl), mutual TLS
// for workers, rotation without restart, and bearer tokens that confine
// each tenant to its own jobs.
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "health_check.grpc.pb.h"
#include "server_reflection.grpc.pb.h"
#include "service/api/token_book.h"
#include "tests/util/http_get.h"
#include "tests/util/postgres_harness.h"
#include "tests/util/service_harness.h"

namespace npuzzle::testing {
namespace {

constexpr char kBoard[] = "8 1 3 4 0 2 7 6 5";

// A CA and its server and worker certificates in dir/name.
std::string MakeCerts(const TempDir& dir, const std::string& name) {
  const std::string out = absl::StrCat(dir.path(), "/", name);
  const CommandResult made = RunCommand(absl::StrCat(NPUZZLE_SOURCE_DIR, "/scripts/make-certs ", out));
  EXPECT_EQ(made.exit_code, 0) << made.err;
  return out;
}

// Replaces `to` in one step, as an operator's rotation should.
void Replace(const std::string& from, const std::string& to) {
  std::filesystem::copy_file(from, to + ".new", std::filesystem::copy_options::overwrite_existing);
  std::filesystem::rename(to + ".new", to);
}

std::vector<std::string> TlsFlags(const std::string& certs) {
  return {"--tls-cert=" + certs + "/server.pem",
          "--tls-key=" + certs + "/server.key",
          "--worker-client-ca=" + certs + "/ca.pem",
          "--local-worker-tls-ca=" + certs + "/ca.pem",
          "--local-worker-tls-cert=" + certs + "/worker.pem",
          "--local-worker-tls-key=" + certs + "/worker.key"};
}

absl::StatusCode ProbeCode(v1::SolverService::Stub& stub) { return GetJob(stub, "probe").status().code(); }

// Whether the HTTPS port's certificate verifies against `ca`, by openssl's
// own client (so not by the code under test).
bool HttpsVerifies(int port, const std::string& ca) {
  const CommandResult r = RunCommand(absl::StrCat("openssl s_client -connect 127.0.0.1:", port, " -CAfile ", ca,
                                                  " -verify_return_error -brief < /dev/null"));
  return r.exit_code == 0;
}

TEST(Security, TlsPortsServeTheirCaAndRefuseOthers) {
  TempDir dir;
  const std::string certs = MakeCerts(dir, "a");
  const std::string other = MakeCerts(dir, "b");
  Coordinator c(dir, 1, TlsFlags(certs));
  c.set_client({certs + "/ca.pem"}, "");
  c.Start();

  absl::StatusOr<v1::Job> job = Submit(c.stub(), SpecFor(kBoard));
  ASSERT_TRUE(job.ok()) << job.status();
  absl::StatusOr<v1::Job> done = AwaitState(c.stub(), job->id(), v1::JOB_STATE_DONE, absl::Seconds(30));
  ASSERT_TRUE(done.ok()) << done.status() << "\n" << c.process()->Log();
  EXPECT_EQ(done->result().moves().size(), 14u);

  EXPECT_EQ(ProbeCode(*Dial(c.client_address())), absl::StatusCode::kUnavailable) << "plaintext client";
  EXPECT_NE(ProbeCode(*Dial(c.client_address(), {other + "/ca.pem"})), absl::StatusCode::kNotFound)
      << "a client trusting another CA got through";
  EXPECT_FALSE(absl::StrContains(c.process()->Log(), "WARNING: plaintext"));
  // What a Kubernetes readiness probe asks, as its gRPC probes speak no TLS.
  absl::StatusOr<HttpResponse> ready = HttpGet("127.0.0.1", c.metrics_port(), "/readyz");
  ASSERT_TRUE(ready.ok()) << ready.status();
  EXPECT_EQ(ready->code, 200);
}

// A standby forwards TLS unread: a client that trusts the coordinators'
// CA, dialing the standby, talks TLS end to end with the active one, and
// a worker with its client certificate is admitted through it.
TEST(Security, AStandbyForwardsTlsConnectionsUnread) {
  TempDir dir_a, dir_b, dir_w;
  const std::string certs = MakeCerts(dir_a, "certs");
  Postgres pg;
  ASSERT_TRUE(pg.ok()) << pg.status();
  std::vector<std::string> flags = TlsFlags(certs);
  flags.push_back("--store=" + pg.uri());
  flags.push_back("--advertise-host=127.0.0.1");
  Coordinator a(dir_a, 0, flags);
  a.set_client({certs + "/ca.pem"}, "");
  a.Start();
  flags.push_back("--standby");
  Coordinator b(dir_b, 0, flags);
  b.Launch();
  ASSERT_TRUE(Eventually(absl::Seconds(10), [&] {
    return absl::StrContains(b.process()->Log(), "forwarding to the active coordinator");
  })) << b.process()->Log();
  std::unique_ptr<Process> worker = StartWorker(b, dir_w, "w1",
                                                {"--tls-ca=" + certs + "/ca.pem", "--tls-cert=" + certs + "/worker.pem",
                                                 "--tls-key=" + certs + "/worker.key", "--tls-server-name=localhost"});
  std::unique_ptr<v1::SolverService::Stub> via_b = Dial(b.client_address(), {certs + "/ca.pem"});
  const absl::StatusOr<v1::Job> job = Submit(*via_b, SpecFor(kBoard));
  ASSERT_TRUE(job.ok()) << job.status();
  const absl::StatusOr<v1::Job> done = AwaitState(*via_b, job->id(), v1::JOB_STATE_DONE, absl::Seconds(30));
  ASSERT_TRUE(done.ok()) << done.status() << "\n" << worker->Log();
  EXPECT_EQ(done->result().moves().size(), 14u);
  EXPECT_EQ(ProbeCode(*Dial(b.client_address())), absl::StatusCode::kUnavailable) << "plaintext through the standby";
}

// Every way to get the TLS and token flags wrong stops the server at
// start with a message naming the flag, rather than failing handshakes.
TEST(Security, BadSecurityFlagsStopTheServerNamingTheFlag) {
  TempDir dir;
  const std::string certs = MakeCerts(dir, "a");
  const std::string cert = "--tls-cert=" + certs + "/server.pem", key = "--tls-key=" + certs + "/server.key";
  const std::string bad_tokens = dir.Write("tokens", "team not-a-hash\n");
  for (const auto& [flags, says] : std::vector<std::pair<std::string, std::string>>{
           {cert, "--tls-cert needs --tls-key"},
           {"--tls-cert=" + dir.path() + "/none.pem " + key, "--tls-cert " + dir.path() + "/none.pem: cannot read"},
           {"--tls-cert=" + certs + "/server.key " + key, "no PEM CERTIFICATE"},
           {"--worker-client-ca=" + certs + "/ca.pem", "need --tls-cert"},
           {cert + " " + key + " --local-workers=1", "give --local-worker-tls-ca"},
           {cert + " " + key + " --worker-client-ca=" + certs +
                "/ca.pem --local-workers=1 --local-worker-tls-ca=" + certs + "/ca.pem",
            "give --local-worker-tls-cert"},
           {"--local-worker-tls-ca=" + certs + "/ca.pem --local-workers=1", "they need --tls-cert"},
           {cert + " " + key + " --worker-listen= --worker-client-ca=" + certs + "/ca.pem", "their own port"},
           {"--auth-tokens=" + bad_tokens, bad_tokens + " line 1"},
           {"--tenant-max-running=-1", "--tenant-max-queued and --tenant-max-running"},
       }) {
    const CommandResult r = RunCommand(absl::StrCat(NPUZZLE_BIN_DIR, "/npuzzle-server --data-dir=", dir.path(),
                                                    "/data --listen=127.0.0.1:0 --worker-listen=127.0.0.1:0 "
                                                    "--metrics-listen= --http-listen= --local-workers=0 ",
                                                    flags));
    EXPECT_EQ(r.exit_code, 2) << flags << "\n" << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, says)) << flags << "\n" << r.err;
  }
}

TEST(Security, PlaintextServerSaysSo) {
  TempDir dir;
  Coordinator c(dir, 0);
  c.Start();
  EXPECT_EQ(ProbeCode(c.stub()), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(c.process()->Log(), "WARNING: plaintext")) << c.process()->Log();
  EXPECT_TRUE(absl::StrContains(c.process()->Log(), "WARNING: no --auth-tokens")) << c.process()->Log();
}

TEST(Security, WorkerWithoutClientCertificateIsRefused) {
  TempDir dir;
  const std::string certs = MakeCerts(dir, "a");
  Coordinator c(dir, 0, TlsFlags(certs));
  c.set_client({certs + "/ca.pem"}, "");
  c.Start();
  absl::StatusOr<v1::Job> job = Submit(c.stub(), SpecFor(kBoard));
  ASSERT_TRUE(job.ok()) << job.status();

  auto stranger = StartWorker(c, dir, "stranger", {"--tls-ca=" + certs + "/ca.pem", "--tls-server-name=localhost"});
  // A worker let in would have leased the job at its first connection, so
  // once that connection's refusal is logged the job must still be queued.
  EXPECT_TRUE(Eventually(absl::Seconds(3), [&] { return absl::StrContains(c.process()->Log(), "andshake"); }))
      << "the refusal is not logged:\n"
      << c.process()->Log();
  EXPECT_EQ(GetJob(c.stub(), job->id())->state(), v1::JOB_STATE_QUEUED) << "a worker without a certificate ran it";
  // Each refused worker says why, and what to give.
  EXPECT_TRUE(Eventually(absl::Seconds(10), [&] {
    return absl::StrContains(stranger->Log(), "give --tls-cert and --tls-key");
  })) << stranger->Log();
  auto plaintext = StartWorker(c, dir, "plaintext", {});
  EXPECT_TRUE(Eventually(absl::Seconds(10), [&] {
    return absl::StrContains(plaintext->Log(), "if its worker port uses TLS, give --tls-ca");
  })) << plaintext->Log();
  auto stranger_ca = MakeCerts(dir, "b");
  auto mistrusting = StartWorker(c, dir, "mistrusting",
                                 {"--tls-ca=" + stranger_ca + "/ca.pem", "--tls-cert=" + certs + "/worker.pem",
                                  "--tls-key=" + certs + "/worker.key", "--tls-server-name=localhost"});
  EXPECT_TRUE(Eventually(absl::Seconds(10), [&] {
    return absl::StrContains(mistrusting->Log(), "TLS failed: --tls-ca must be the CA that signed");
  })) << mistrusting->Log();
  EXPECT_EQ(GetJob(c.stub(), job->id())->state(), v1::JOB_STATE_QUEUED);

  auto member = StartWorker(c, dir, "member",
                            {"--tls-ca=" + certs + "/ca.pem", "--tls-cert=" + certs + "/worker.pem",
                             "--tls-key=" + certs + "/worker.key", "--tls-server-name=localhost"});
  absl::StatusOr<v1::Job> done = AwaitState(c.stub(), job->id(), v1::JOB_STATE_DONE, absl::Seconds(30));
  ASSERT_TRUE(done.ok()) << done.status() << "\n" << member->Log();
  EXPECT_EQ(done->worker_id(), "member");
}

TEST(Security, RotatedCertificateIsServedWithoutRestart) {
  TempDir dir;
  const std::string old_certs = MakeCerts(dir, "old");
  const std::string new_certs = MakeCerts(dir, "new");
  const std::string live = dir.path() + "/live";
  std::filesystem::create_directories(live);
  Replace(old_certs + "/server.pem", live + "/server.pem");
  Replace(old_certs + "/server.key", live + "/server.key");
  Coordinator c(
      dir, 0, {"--tls-cert=" + live + "/server.pem", "--tls-key=" + live + "/server.key", "--tls-reload-interval-s=1"});
  c.set_client({old_certs + "/ca.pem"}, "");
  c.Start();
  ASSERT_EQ(ProbeCode(c.stub()), absl::StatusCode::kNotFound);
  ASSERT_TRUE(HttpsVerifies(c.http_port(), old_certs + "/ca.pem"));

  // The key first: until the certificate follows, the pair is refused and
  // the old one served on.
  Replace(new_certs + "/server.key", live + "/server.key");
  absl::SleepFor(absl::Milliseconds(1500));
  EXPECT_TRUE(HttpsVerifies(c.http_port(), old_certs + "/ca.pem"));
  Replace(new_certs + "/server.pem", live + "/server.pem");
  EXPECT_TRUE(Eventually(absl::Seconds(15), [&] {
    return ProbeCode(*Dial(c.client_address(), {new_certs + "/ca.pem"})) == absl::StatusCode::kNotFound;
  })) << "the new certificate was never served";
  EXPECT_NE(ProbeCode(*Dial(c.client_address(), {old_certs + "/ca.pem"})), absl::StatusCode::kNotFound)
      << "new connections still get the old certificate";
  EXPECT_TRUE(Eventually(absl::Seconds(15), [&] { return HttpsVerifies(c.http_port(), new_certs + "/ca.pem"); }))
      << "the HTTPS port never served the new certificate";
  EXPECT_FALSE(HttpsVerifies(c.http_port(), old_certs + "/ca.pem"));
  EXPECT_TRUE(absl::StrContains(c.process()->Log(), "HTTPS: keeping the certificate in use")) << c.process()->Log();
  EXPECT_TRUE(absl::StrContains(c.process()->Log(), "HTTPS: serving the reloaded certificate")) << c.process()->Log();
  EXPECT_TRUE(c.process()->Running());
}

// The CLI as a user runs it against a secured server: each error says
// which of --tls-ca and --token is missing or wrong.
TEST(Security, CliNamesTheSettingAtFault) {
  TempDir dir;
  const std::string certs = MakeCerts(dir, "a");
  const std::string other = MakeCerts(dir, "b");
  const std::string tokens = dir.Write("tokens", absl::StrCat("team ", Sha256Hex("team-secret"), "\n"));
  Coordinator c(dir, 1,
                {"--tls-cert=" + certs + "/server.pem", "--tls-key=" + certs + "/server.key", "--auth-tokens=" + tokens,
                 "--local-worker-tls-ca=" + certs + "/ca.pem"});
  c.set_client({certs + "/ca.pem"}, "team-secret");
  c.Start();
  // stdout and stderr together: what the user sees.
  const auto cli = [&](const std::string& environment, const std::string& flags) {
    const CommandResult r = RunCommand(
        absl::StrCat(environment, " ", NPUZZLE_BIN_DIR, "/npuzzle ", flags, " --server ", c.client_address()));
    return CommandResult{r.exit_code, r.out + r.err, ""};
  };
  const CommandResult solved =
      cli("NPUZZLE_TOKEN=", "solve --tls-ca " + certs + "/ca.pem --token team-secret --board '8 1 3 4 0 2 7 6 5'");
  EXPECT_EQ(solved.exit_code, 0) << solved.out;
  EXPECT_TRUE(absl::StrContains(solved.out, "moves (blank): ")) << solved.out;
  const CommandResult by_env = cli("NPUZZLE_TOKEN=team-secret", "get --job job-x --tls-ca " + certs + "/ca.pem");
  EXPECT_TRUE(absl::StrContains(by_env.out, "no job with id 'job-x'")) << by_env.out;
  for (const auto& [flags, says] : std::vector<std::pair<std::string, std::string>>{
           {"get --job job-x --tls-ca " + certs + "/ca.pem", "give --token or set NPUZZLE_TOKEN"},
           {"get --job job-x --tls-ca " + certs + "/ca.pem --token nope", "--token or NPUZZLE_TOKEN is wrong"},
           {"get --job job-x --token team-secret", "give --tls-ca"},
           {"get --job job-x --token team-secret --tls-ca " + other + "/ca.pem", "--tls-ca must be the CA"},
           {"get --job job-x --tls-ca " + dir.path() + "/missing.pem", "--tls-ca " + dir.path() + "/missing.pem"},
           {"get --job job-x --token team-secret --tls-ca " + certs + "/ca.pem --tls-server-name elsewhere.example",
            "the certificate must name the host dialled or --tls-server-name"},
       }) {
    const CommandResult r = cli("NPUZZLE_TOKEN=", flags);
    EXPECT_EQ(r.exit_code, 2) << flags << "\n" << r.out;
    EXPECT_TRUE(absl::StrContains(r.out, says)) << flags << "\n" << r.out;
  }
}

TEST(TokenBook, ParseErrorsNameTheLine) {
  const std::string hash = Sha256Hex("t");
  EXPECT_EQ(hash, "e3b98a4da31a127d4bde6e43033f66ba274cab0eb7eb1c70ec41402bf6273dd8");
  EXPECT_TRUE(TokenBook::Parse("f", "# comment\n\nalpha " + hash + "\n").ok());
  for (const auto& [text, error] : std::vector<std::pair<std::string, std::string>>{
           {"alpha\n", "f line 1: want TENANT SHA256-HEX-OF-TOKEN"},
           {"\nal/pha " + hash, "f line 2: a tenant is"},
           {"alpha the-token-itself", "f line 1: the token's SHA-256 must be 64 hex digits"},
           {"alpha " + hash + "\nbeta " + hash, "f line 2: this token hash is listed twice"},
           {"alpha " + hash + " max_queued=-1", "f line 1: 'max_queued=-1': want max_queued=N or max_running=N"},
           {"alpha " + hash + " speed=9", "f line 1: 'speed=9'"},
           {"alpha " + hash + " max_running=2\nalpha " + Sha256Hex("u") + " max_running=3",
            "f line 2: tenant alpha's quotas differ"},
       }) {
    const absl::Status s = TokenBook::Parse("f", text).status();
    EXPECT_TRUE(absl::StartsWith(s.message(), error)) << s;
  }
}

std::string TokenLine(const std::string& tenant, const std::string& token, const std::string& quotas = "") {
  return absl::StrCat(tenant, " ", Sha256Hex(token), " ", quotas, "\n");
}

TEST(TokenBook, QuotasComeFromTheFileElseTheDefaults) {
  TempDir dir;
  const std::string path = dir.Write("tokens", TokenLine("a", "ta", "max_running=2") + TokenLine("b", "tb"));
  auto book = TokenBook::Open(path, absl::Seconds(1));
  ASSERT_TRUE(book.ok()) << book.status();
  const TenantQuota defaults{.max_queued = 7, .max_running = 9};
  EXPECT_EQ((*book)->QuotaOf("a", defaults).max_running, 2);
  EXPECT_EQ((*book)->QuotaOf("a", defaults).max_queued, 7);
  EXPECT_EQ((*book)->QuotaOf("b", defaults).max_running, 9);
}

// Real processes: a tenant over its max_queued is refused, naming the
// quota, and may submit again once its job has run.
TEST(Security, QuotaIsEnforcedAndReleased) {
  TempDir dir;
  const std::string tokens = dir.Write("tokens", TokenLine("capped", "capped-secret", "max_queued=1"));
  Coordinator c(dir, 0, {"--auth-tokens=" + tokens});
  c.set_client({}, "capped-secret");
  c.Start();
  absl::StatusOr<v1::Job> first = Submit(c.stub(), SpecFor(kBoard));
  ASSERT_TRUE(first.ok()) << first.status();
  const absl::Status refused = Submit(c.stub(), SpecFor(kBoard)).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(refused.message(), "max_queued")) << refused;

  auto worker = StartWorker(c, dir, "w1");
  ASSERT_TRUE(AwaitState(c.stub(), first->id(), v1::JOB_STATE_DONE, absl::Seconds(30)).ok());
  EXPECT_TRUE(Submit(c.stub(), SpecFor(kBoard)).ok()) << "the quota was not released";
}

// Real processes: one tenant's job submitted after another's 200 runs
// second, long before that backlog drains.
TEST(Security, ATenantsJobIsNotStuckBehindAnothersBacklog) {
  TempDir dir;
  const std::string tokens = dir.Write("tokens", TokenLine("big", "big-secret") + TokenLine("small", "small-secret"));
  Coordinator c(dir, 0, {"--auth-tokens=" + tokens});
  c.set_client({}, "big-secret");
  c.Start();
  std::vector<std::string> backlog;
  for (int i = 0; i < 200; ++i) {
    absl::StatusOr<v1::Job> job = Submit(c.stub(), SpecFor(kBoard));
    ASSERT_TRUE(job.ok()) << job.status();
    backlog.push_back(job->id());
  }
  auto small = Dial(c.client_address(), {}, "small-secret");
  absl::StatusOr<v1::Job> mine = Submit(*small, SpecFor(kBoard));
  ASSERT_TRUE(mine.ok()) << mine.status();

  auto worker = StartWorker(c, dir, "w1");
  absl::StatusOr<v1::Job> done = AwaitState(*small, mine->id(), v1::JOB_STATE_DONE, absl::Seconds(30));
  ASSERT_TRUE(done.ok()) << done.status();
  // One worker runs one job at a time, so finish times give the order.
  const auto finished = [](const v1::Job& job) {
    return std::pair{job.finish_time().seconds(), job.finish_time().nanos()};
  };
  int ran_before = 0;
  for (const std::string& id : backlog) {
    absl::StatusOr<v1::Job> job = AwaitState(c.stub(), id, v1::JOB_STATE_DONE, absl::Seconds(60));
    ASSERT_TRUE(job.ok()) << job.status();
    ran_before += finished(*job) < finished(*done);
  }
  EXPECT_LE(ran_before, 1) << "the small tenant's job waited behind the backlog";
}

class TokenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tokens_ = dir_.Write(
        "tokens", "# tenant sha256(token)\n" + TokenLine("alpha", "alpha-secret") + TokenLine("beta", "beta-secret"));
    coordinator_ = std::make_unique<Coordinator>(
        dir_, 1, std::vector<std::string>{"--auth-tokens=" + tokens_, "--tls-reload-interval-s=1"});
    coordinator_->set_client({}, "alpha-secret");
    coordinator_->Start();
  }

  v1::SolverService::Stub& alpha() { return coordinator_->stub(); }
  std::unique_ptr<v1::SolverService::Stub> As(const std::string& token) {
    return Dial(coordinator_->client_address(), {}, token);
  }

  TempDir dir_;
  std::string tokens_;
  std::unique_ptr<Coordinator> coordinator_;
};

TEST_F(TokenTest, NoTokenOrAWrongOneIsUnauthenticatedButHealthStaysOpen) {
  EXPECT_TRUE(absl::StrContains(coordinator_->process()->Log(), "tokens cross the network in the clear"));
  for (const std::string token : {"", "not-a-listed-token"}) {
    auto stub = As(token);
    absl::StatusOr<v1::Job> submitted = Submit(*stub, SpecFor(kBoard));
    EXPECT_EQ(submitted.status().code(), absl::StatusCode::kUnauthenticated) << "token '" << token << "'";
    EXPECT_EQ(ProbeCode(*stub), absl::StatusCode::kUnauthenticated);
    EXPECT_EQ(WatchToEnd(*stub, "probe", absl::Seconds(10)).status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
    grpc::ClientContext context;
    v1::ListJobsResponse listed;
    EXPECT_EQ(stub->ListJobs(&context, v1::ListJobsRequest(), &listed).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
  auto health = grpc::health::v1::Health::NewStub(
      grpc::CreateChannel(coordinator_->client_address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  grpc::health::v1::HealthCheckResponse response;
  EXPECT_TRUE(health->Check(&context, grpc::health::v1::HealthCheckRequest(), &response).ok());
  EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING);

  auto reflection = grpc::reflection::v1alpha::ServerReflection::NewStub(
      grpc::CreateChannel(coordinator_->client_address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext reflection_context;
  auto stream = reflection->ServerReflectionInfo(&reflection_context);
  grpc::reflection::v1alpha::ServerReflectionRequest list;
  list.set_list_services("");
  ASSERT_TRUE(stream->Write(list));
  grpc::reflection::v1alpha::ServerReflectionResponse listed;
  ASSERT_TRUE(stream->Read(&listed)) << "reflection wants a token";
  EXPECT_GT(listed.list_services_response().service_size(), 0);
  stream->WritesDone();
}

// /metrics takes no token: it names no tenant (unless the operator asks
// for that with --metrics-tenants), token or board.
TEST_F(TokenTest, MetricsCarryNoTenantsTokensOrBoards) {
  v1::JobSpec spec = SpecFor("1 2 3 4 5 6 0 7 8");
  absl::StatusOr<v1::Job> job = Submit(alpha(), spec);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE(AwaitState(alpha(), job->id(), v1::JOB_STATE_DONE, absl::Seconds(30)).ok());
  absl::StatusOr<HttpResponse> scraped = HttpGet("127.0.0.1", coordinator_->metrics_port(), "/metrics");
  ASSERT_TRUE(scraped.ok()) << scraped.status();
  for (const std::string& secret :
       std::vector<std::string>{"alpha", Sha256Hex("alpha-secret"), "1 2 3 4 5 6 0 7 8", job->id()}) {
    EXPECT_FALSE(absl::StrContains(scraped->body, secret)) << secret;
  }
}

TEST_F(TokenTest, ATenantSeesNothingOfAnothersJobs) {
  v1::JobSpec spec = SpecFor(kBoard);
  spec.set_request_id("shared-request-id");
  absl::StatusOr<v1::Job> mine = Submit(alpha(), spec);
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_EQ(mine->tenant(), "alpha");
  ASSERT_TRUE(AwaitState(alpha(), mine->id(), v1::JOB_STATE_DONE, absl::Seconds(30)).ok());

  auto beta = As("beta-secret");
  const absl::Status unknown = GetJob(*beta, "no-such-job").status();
  const absl::Status foreign = GetJob(*beta, mine->id()).status();
  EXPECT_EQ(foreign.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(foreign.message(), absl::StrCat("no job with id '", mine->id(), "'"));
  EXPECT_EQ(unknown.message(), "no job with id 'no-such-job'");

  const Watched watched = WatchToEnd(*beta, mine->id(), absl::Seconds(10));
  EXPECT_EQ(watched.status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(watched.events.empty());
  {
    grpc::ClientContext context;
    v1::CancelJobRequest request;
    request.set_job_id(mine->id());
    v1::Job cancelled;
    EXPECT_EQ(beta->CancelJob(&context, request, &cancelled).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  // The same request id is beta's own: a new job, not alpha's.
  absl::StatusOr<v1::Job> theirs = Submit(*beta, spec);
  ASSERT_TRUE(theirs.ok()) << theirs.status();
  EXPECT_NE(theirs->id(), mine->id());
  EXPECT_EQ(theirs->tenant(), "beta");

  const std::vector<std::pair<v1::SolverService::Stub*, std::string>> own_jobs = {{&alpha(), mine->id()},
                                                                                  {beta.get(), theirs->id()}};
  for (const auto& [stub, own] : own_jobs) {
    grpc::ClientContext context;
    v1::ListJobsResponse listed;
    ASSERT_TRUE(stub->ListJobs(&context, v1::ListJobsRequest(), &listed).ok());
    ASSERT_EQ(listed.jobs_size(), 1);
    EXPECT_EQ(listed.jobs(0).id(), own);
  }
  EXPECT_EQ(GetJob(alpha(), mine->id())->state(), v1::JOB_STATE_DONE) << "beta's cancel reached alpha's job";
}

// A page token says nothing of where in the store's order it points (a
// position there counts every tenant's jobs) and is good only for the
// tenant it was given to.
TEST_F(TokenTest, PageTokensAreOpaqueAndGoodOnlyForTheirTenant) {
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(Submit(alpha(), SpecFor(kBoard))->id());
  v1::ListJobsRequest request;
  request.set_page_size(1);
  v1::ListJobsResponse first;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(alpha().ListJobs(&context, request, &first).ok());
  }
  ASSERT_EQ(first.jobs_size(), 1);
  EXPECT_EQ(first.jobs(0).id(), ids[2]);
  const std::string token = first.next_page_token();
  ASSERT_FALSE(token.empty());
  int64_t number;
  EXPECT_FALSE(absl::SimpleAtoi(token, &number)) << token;
  request.set_page_token(token);
  auto beta = As("beta-secret");
  {
    grpc::ClientContext context;
    v1::ListJobsResponse stolen;
    const grpc::Status s = beta->ListJobs(&context, request, &stolen);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_TRUE(absl::StrContains(s.error_message(), "page_token is not one this service gave")) << s.error_message();
  }
  {
    grpc::ClientContext context;
    v1::ListJobsResponse second;
    ASSERT_TRUE(alpha().ListJobs(&context, request, &second).ok());
    ASSERT_EQ(second.jobs_size(), 1);
    EXPECT_EQ(second.jobs(0).id(), ids[1]);
  }
  // A token altered by one character is refused, not read as another place.
  std::string altered = token;
  altered[3] = altered[3] == 'A' ? 'B' : 'A';
  request.set_page_token(altered);
  grpc::ClientContext context;
  v1::ListJobsResponse forged;
  EXPECT_EQ(alpha().ListJobs(&context, request, &forged).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(TokenTest, ChangedTokensFileTakesEffectWithoutRestart) {
  std::ofstream(tokens_ + ".new") << TokenLine("alpha", "alpha-secret") << TokenLine("gamma", "gamma-secret");
  std::filesystem::rename(tokens_ + ".new", tokens_);
  auto gamma = As("gamma-secret");
  auto beta = As("beta-secret");
  EXPECT_TRUE(Eventually(absl::Seconds(10), [&] { return ProbeCode(*gamma) == absl::StatusCode::kNotFound; }))
      << "the new token was never accepted";
  EXPECT_EQ(ProbeCode(*beta), absl::StatusCode::kUnauthenticated) << "the removed token still works";

  // A file that does not parse is refused (noticed on a call); the tokens
  // in force stay.
  std::ofstream(tokens_ + ".new") << "gamma not-a-hash\n";
  std::filesystem::rename(tokens_ + ".new", tokens_);
  EXPECT_TRUE(Eventually(absl::Seconds(10), [&] {
    ProbeCode(*gamma);
    return absl::StrContains(coordinator_->process()->Log(), "the tokens read before stay in force");
  })) << coordinator_->process()->Log();
  EXPECT_EQ(ProbeCode(*gamma), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace npuzzle::testing
