// Command npuzzle-go is a Go client for the npuzzle service: submit jobs,
// watch their progress, solve, get, cancel and list. It is built with
// Debian's Go gRPC packages only; the stubs are generated from proto/ at
// build time.
//
//	npuzzle-go -server localhost:50051 solve -board "8 1 3 4 0 2 7 6 5"
//	npuzzle-go submit -board "..." -algorithm idastar -label team=a
//	npuzzle-go watch JOB_ID
//	npuzzle-go list -label team=a -state done
//
// A secured server: -tls-ca FILE (the CA that signed its certificate) and
// -token TOKEN (or NPUZZLE_TOKEN in the environment).
//
// Exit codes: 0 done (solved or unsolvable), 1 the job failed, 2 a usage or
// RPC error (an unknown job included), 3 the job ended without an answer
// (cancelled, or a limit reached).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "npuzzle.dev/gen/npuzzle/v1"
)

const usage = `usage: npuzzle-go [global flags] COMMAND [flags]

commands:
  solve  -board B [spec flags]   submit and follow to the result
  submit -board B [spec flags]   submit; print the job id
  watch  JOB_ID                  follow a job's progress to its result
  get    JOB_ID                  print a job
  cancel JOB_ID                  cancel a job
  list   [-state S] [-label K=V] [-page-size N]

global flags:
`

type options struct {
	server, tlsCA, tlsServerName, token string
	json                                bool
}

// labels is a repeatable -label KEY=VALUE flag.
type labels map[string]string

func (l labels) String() string { return fmt.Sprint(map[string]string(l)) }
func (l labels) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("label %q is not KEY=VALUE", v)
	}
	l[k] = val
	return nil
}

// states is a repeatable -state flag (queued, running, done, ...).
type states []pb.JobState

func (s *states) String() string { return fmt.Sprint(*s) }
func (s *states) Set(v string) error {
	n, ok := pb.JobState_value["JOB_STATE_"+strings.ToUpper(v)]
	if !ok || n == 0 {
		return fmt.Errorf("state %q is not one of queued, running, done, failed, cancelled", v)
	}
	*s = append(*s, pb.JobState(n))
	return nil
}

func stateName(s pb.JobState) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "JOB_STATE_"))
}

// protoCodec marshals with google.golang.org/protobuf. Debian's grpc-go
// (1.33) marshals through github.com/golang/protobuf 1.3, which predates the
// messages Debian's protoc-gen-go (1.28) generates and cannot read them.
type protoCodec struct{}

func (protoCodec) Marshal(v interface{}) ([]byte, error) { return proto.Marshal(v.(proto.Message)) }
func (protoCodec) Unmarshal(data []byte, v interface{}) error {
	return proto.Unmarshal(data, v.(proto.Message))
}
func (protoCodec) Name() string { return "proto" }

var _ encoding.Codec = protoCodec{}

// errHelp: -h was asked for and answered.
var errHelp = errors.New("help shown")

// parse reads a command's flags; errors come back to be printed once, and
// -h prints the command's flags with their defaults.
func parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(os.Stdout)
		fmt.Printf("npuzzle-go %s flags:\n", fs.Name())
		fs.PrintDefaults()
		return errHelp
	}
	return err
}

func specFlags(name string, args []string) (*pb.JobSpec, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	board := fs.String("board", "", "the start board (required), in any form the npuzzle CLI reads")
	goal := fs.String("goal", "", "the goal board (default: the preset)")
	preset := fs.String("goal-preset", "", "standard, blank-first or snail")
	algorithm := fs.String("algorithm", "auto", "search algorithm")
	heuristic := fs.String("heuristic", "manhattan", "heuristic")
	pdbPreset := fs.String("pdb-preset", "", "pattern-database preset")
	priority := fs.Int("priority", 0, "larger runs sooner")
	maxTime := fs.Uint64("max-time-ms", 0, "time limit (0: the server's default)")
	maxNodes := fs.Uint64("max-nodes", 0, "states expanded (0: the server's default)")
	requestID := fs.String("request-id", "", "makes a retried submit idempotent")
	l := labels{}
	fs.Var(l, "label", "KEY=VALUE (repeatable)")
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	if *board == "" || fs.NArg() > 0 {
		return nil, errors.New(name + " needs -board and takes no arguments")
	}
	spec := &pb.JobSpec{
		Start: &pb.Board{Text: *board}, GoalPreset: *preset, Algorithm: *algorithm, Heuristic: *heuristic,
		PdbPreset: *pdbPreset, Priority: int32(*priority), Labels: l, RequestId: *requestID,
		Limits: &pb.Limits{MaxTimeMs: *maxTime, MaxNodes: *maxNodes},
	}
	if *goal != "" {
		spec.Goal = &pb.Board{Text: *goal}
	}
	return spec, nil
}

func dial(o *options) (*grpc.ClientConn, error) {
	security := grpc.WithInsecure()
	if o.tlsCA != "" {
		creds, err := credentials.NewClientTLSFromFile(o.tlsCA, o.tlsServerName)
		if err != nil {
			return nil, fmt.Errorf("-tls-ca %s: %v", o.tlsCA, err)
		}
		security = grpc.WithTransportCredentials(creds)
	}
	return grpc.Dial(o.server, security, grpc.WithDefaultCallOptions(grpc.ForceCodec(protoCodec{})))
}

func printJSON(m proto.Message) {
	b, _ := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	fmt.Println(string(b))
}

func printResult(o *options, job *pb.Job) {
	if o.json {
		printJSON(job)
		return
	}
	r := job.GetResult()
	switch {
	case job.State == pb.JobState_JOB_STATE_DONE && r.GetStatus() == "solved":
		optimal := ""
		if r.Optimal {
			optimal = " (optimal)"
		}
		fmt.Printf("%s: solved in %d moves%s with %s + %s\n", job.Id, r.Length, optimal, r.Algorithm, r.Heuristic)
		fmt.Printf("moves (blank): %s\n", r.Moves)
		fmt.Printf("expanded %d, generated %d, %.3f ms\n", r.GetStats().GetExpanded(), r.GetStats().GetGenerated(),
			r.GetStats().GetElapsedMs())
	case job.State == pb.JobState_JOB_STATE_FAILED:
		fmt.Printf("%s: failed: %s\n", job.Id, job.Error)
	default:
		fmt.Printf("%s: %s: %s\n", job.Id, stateName(job.State), r.GetStatus())
	}
}

// follow prints a stream's events (progress to stderr), then the job's
// result, and returns the exit code its last state calls for.
func follow(o *options, recv func() (*pb.JobEvent, error)) (int, error) {
	var last *pb.Job
	for {
		event, err := recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 2, err
		}
		if o.json {
			printJSON(event)
		}
		if p := event.GetProgress(); p != nil && !o.json {
			fmt.Fprintf(os.Stderr, "progress: %d expanded, %d generated, bound %d, %.0f ms\n", p.Expanded, p.Generated,
				p.Bound, p.ElapsedMs)
		}
		if s := event.GetState(); s != nil {
			last = s
			if !o.json {
				fmt.Fprintf(os.Stderr, "%s %s\n", s.Id, stateName(s.State))
			}
		}
	}
	if last != nil && !o.json {
		printResult(o, last)
	}
	return exitCode(last), nil
}

func exitCode(job *pb.Job) int {
	switch {
	case job == nil || job.State == pb.JobState_JOB_STATE_FAILED:
		return 1
	case job.State == pb.JobState_JOB_STATE_DONE &&
		(job.GetResult().GetStatus() == "solved" || job.GetResult().GetStatus() == "unsolvable"):
		return 0
	default:
		return 3
	}
}

// hint says which security setting to look at, for errors that come from one.
func hint(o *options, err error) string {
	switch status.Code(err) {
	case codes.Unauthenticated:
		if o.token != "" {
			return " (the token given with -token or NPUZZLE_TOKEN is wrong)"
		}
		return " (the server wants a token: give -token or set NPUZZLE_TOKEN)"
	case codes.Unavailable:
		if o.tlsCA == "" {
			return " (if the server uses TLS, give -tls-ca)"
		}
	}
	return ""
}

func oneJobID(name string, args []string) (string, error) {
	if len(args) != 1 {
		return "", fmt.Errorf("%s takes one JOB_ID", name)
	}
	return args[0], nil
}

func run(o *options, command string, args []string) (int, error) {
	conn, err := dial(o)
	if err != nil {
		return 2, err
	}
	defer conn.Close()
	client := pb.NewSolverServiceClient(conn)
	ctx := context.Background()
	if o.token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+o.token)
	}
	unary, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()

	switch command {
	case "solve", "submit":
		spec, err := specFlags(command, args)
		if err != nil {
			return 2, err
		}
		request := &pb.SubmitJobRequest{Spec: spec}
		if command == "submit" {
			job, err := client.SubmitJob(unary, request)
			if err != nil {
				return 2, err
			}
			fmt.Println(job.Id)
			return 0, nil
		}
		stream, err := client.Solve(ctx, request)
		if err != nil {
			return 2, err
		}
		return follow(o, stream.Recv)
	case "watch":
		id, err := oneJobID(command, args)
		if err != nil {
			return 2, err
		}
		stream, err := client.WatchJob(ctx, &pb.WatchJobRequest{JobId: id})
		if err != nil {
			return 2, err
		}
		return follow(o, stream.Recv)
	case "get":
		id, err := oneJobID(command, args)
		if err != nil {
			return 2, err
		}
		job, err := client.GetJob(unary, &pb.GetJobRequest{JobId: id})
		if err != nil {
			return 2, err
		}
		printResult(o, job)
		return 0, nil
	case "cancel":
		id, err := oneJobID(command, args)
		if err != nil {
			return 2, err
		}
		job, err := client.CancelJob(unary, &pb.CancelJobRequest{JobId: id})
		if err != nil {
			return 2, err
		}
		fmt.Printf("%s %s\n", job.Id, stateName(job.State))
		return 0, nil
	case "list":
		fs := flag.NewFlagSet("list", flag.ContinueOnError)
		var s states
		l := labels{}
		fs.Var(&s, "state", "queued, running, done, failed or cancelled (repeatable)")
		fs.Var(l, "label", "KEY=VALUE (repeatable; all must match)")
		pageSize := fs.Int("page-size", 50, "jobs to show, newest first")
		if err := parse(fs, args); err != nil {
			return 2, err
		}
		// A filtered listing may come back in short pages: page on until
		// there are page-size jobs or no more.
		var jobs []*pb.Job
		request := &pb.ListJobsRequest{States: s, Labels: l}
		for {
			request.PageSize = int32(*pageSize - len(jobs))
			response, err := client.ListJobs(unary, request)
			if err != nil {
				return 2, err
			}
			jobs = append(jobs, response.Jobs...)
			request.PageToken = response.NextPageToken
			if request.PageToken == "" || len(jobs) >= *pageSize {
				break
			}
		}
		for _, job := range jobs {
			if o.json {
				printJSON(job)
			} else {
				fmt.Printf("%s %s %s\n", job.Id, stateName(job.State), job.GetResult().GetStatus())
			}
		}
		return 0, nil
	}
	return 2, fmt.Errorf("unknown command %q", command)
}

func main() {
	o := &options{}
	flag.StringVar(&o.server, "server", envOr("NPUZZLE_SERVER", "localhost:50051"), "the service's client address")
	flag.StringVar(&o.tlsCA, "tls-ca", "", "PEM CA that signed the server's certificate (default: plaintext)")
	flag.StringVar(&o.tlsServerName, "tls-server-name", "", "the name the server's certificate must hold")
	flag.StringVar(&o.token, "token", os.Getenv("NPUZZLE_TOKEN"), "bearer token (default: $NPUZZLE_TOKEN)")
	flag.BoolVar(&o.json, "json", false, "print jobs and events as JSON, one per line")
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), usage)
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	code, err := run(o, flag.Arg(0), flag.Args()[1:])
	if errors.Is(err, errHelp) {
		os.Exit(0)
	}
	if err != nil {
		if s, ok := status.FromError(err); ok && s.Code() != codes.OK {
			fmt.Fprintf(os.Stderr, "npuzzle-go: %s: %s%s\n", strings.ToUpper(toSnake(s.Code().String())), s.Message(),
				hint(o, err))
		} else {
			fmt.Fprintf(os.Stderr, "npuzzle-go: %v\n", err)
		}
	}
	os.Exit(code)
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// toSnake turns gRPC's "NotFound" into "not_found", as other clients print codes.
func toSnake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToLower(b.String())
}
