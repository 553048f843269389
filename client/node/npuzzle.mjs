#!/usr/bin/env node
// A Node.js client for the npuzzle service, with @grpc/grpc-js and
// @grpc/proto-loader (installed by scripts/setup from package-lock.json).
// It reads the service's .proto at run time from proto/ in this repository
// (or --proto DIR).
//
//   node npuzzle.mjs --server localhost:50051 solve --board "8 1 3 4 0 2 7 6 5"
//   node npuzzle.mjs submit --board "..." --algorithm idastar --label team=a
//   node npuzzle.mjs watch JOB_ID
//   node npuzzle.mjs list --label team=a --state done
//
// A secured server: --tls-ca FILE (the CA that signed its certificate) and
// --token TOKEN (or NPUZZLE_TOKEN in the environment).
//
// Exit codes: 0 done (solved or unsolvable), 1 the job failed, 2 a usage or
// RPC error (an unknown job included), 3 the job ended without an answer
// (cancelled, or a limit reached).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import grpc from "@grpc/grpc-js";
import protoLoader from "@grpc/proto-loader";

const USAGE = `usage: npuzzle.mjs [--server HOST:PORT] [--tls-ca FILE] [--tls-server-name NAME] [--token T] [--json]
                   COMMAND [flags]

commands:
  solve  --board B [spec flags]   submit and follow to the result
  submit --board B [spec flags]   submit; print the job id
  watch  JOB_ID                   follow a job's progress to its result
  get    JOB_ID                   print a job
  cancel JOB_ID                   cancel a job
  list   [--state S] [--label K=V] [--page-size N]

spec flags: --goal B --goal-preset P --algorithm A (auto) --heuristic H (manhattan)
            --pdb-preset P --priority N --max-time-ms N --max-nodes N --request-id ID --label K=V
`;

const OPTIONS = {
  server: { type: "string", default: process.env.NPUZZLE_SERVER || "localhost:50051" },
  "tls-ca": { type: "string" },
  "tls-server-name": { type: "string" },
  token: { type: "string", default: process.env.NPUZZLE_TOKEN || "" },
  json: { type: "boolean", default: false },
  proto: { type: "string", default: fileURLToPath(new URL("../../proto", import.meta.url)) },
  help: { type: "boolean", short: "h", default: false },
  board: { type: "string" },
  goal: { type: "string" },
  "goal-preset": { type: "string", default: "" },
  algorithm: { type: "string", default: "auto" },
  heuristic: { type: "string", default: "manhattan" },
  "pdb-preset": { type: "string", default: "" },
  priority: { type: "string", default: "0" },
  "max-time-ms": { type: "string", default: "0" },
  "max-nodes": { type: "string", default: "0" },
  "request-id": { type: "string", default: "" },
  label: { type: "string", multiple: true, default: [] },
  state: { type: "string", multiple: true, default: [] },
  "page-size": { type: "string", default: "50" },
};

class UsageError extends Error {}

function labels(list) {
  const out = {};
  for (const item of list) {
    const eq = item.indexOf("=");
    if (eq < 0) throw new UsageError(`label "${item}" is not KEY=VALUE`);
    out[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return out;
}

function number(args, name) {
  const text = args[name];
  if (!/^\d+$/.test(text)) throw new UsageError(`--${name} "${text}" is not a whole number`);
  return text;
}

function spec(args) {
  if (!args.board) throw new UsageError("solve and submit need --board");
  const s = {
    start: { text: args.board },
    goal_preset: args["goal-preset"],
    algorithm: args.algorithm,
    heuristic: args.heuristic,
    pdb_preset: args["pdb-preset"],
    priority: Number(number(args, "priority")),
    labels: labels(args.label),
    request_id: args["request-id"],
    limits: { max_time_ms: number(args, "max-time-ms"), max_nodes: number(args, "max-nodes") },
  };
  if (args.goal) s.goal = { text: args.goal };
  return s;
}

const stateName = (s) => s.replace("JOB_STATE_", "").toLowerCase();

function printResult(args, job) {
  if (args.json) {
    console.log(JSON.stringify(job));
    return;
  }
  const r = job.result || {};
  if (job.state === "JOB_STATE_DONE" && r.status === "solved") {
    console.log(`${job.id}: solved in ${r.length || 0} moves${r.optimal ? " (optimal)" : ""} with ${r.algorithm} + ${r.heuristic}`);
    console.log(`moves (blank): ${r.moves || ""}`);
    const s = r.stats || {};
    console.log(`expanded ${s.expanded || 0}, generated ${s.generated || 0}, ${(s.elapsed_ms || 0).toFixed(3)} ms`);
  } else if (job.state === "JOB_STATE_FAILED") {
    console.log(`${job.id}: failed: ${job.error}`);
  } else {
    console.log(`${job.id}: ${stateName(job.state)}: ${r.status || ""}`);
  }
}

// Prints a stream's events (progress to stderr) and resolves to the job's
// last state.
function follow(args, stream) {
  return new Promise((resolve, reject) => {
    let last = null;
    stream.on("data", (event) => {
      if (args.json) console.log(JSON.stringify(event));
      if (event.progress && !args.json) {
        const p = event.progress;
        console.error(`progress: ${p.expanded || 0} expanded, ${p.generated || 0} generated, bound ${p.bound || 0}, ` +
                      `${Math.round(p.elapsed_ms || 0)} ms`);
      }
      if (event.state) {
        last = event.state;
        if (!args.json) console.error(`${last.id} ${stateName(last.state)}`);
      }
    });
    stream.on("error", reject);
    stream.on("end", () => resolve(last));
  });
}

function exitCode(job) {
  if (!job || job.state === "JOB_STATE_FAILED") return 1;
  const status = (job.result || {}).status;
  return job.state === "JOB_STATE_DONE" && (status === "solved" || status === "unsolvable") ? 0 : 3;
}

// Which security setting to look at, for errors that come from one.
function hint(args, error) {
  if (error.code === grpc.status.UNAUTHENTICATED) {
    return args.token ? " (the token given with --token or NPUZZLE_TOKEN is wrong)"
                      : " (the server wants a token: give --token or set NPUZZLE_TOKEN)";
  }
  if (error.code === grpc.status.UNAVAILABLE && !args["tls-ca"]) return " (if the server uses TLS, give --tls-ca)";
  return "";
}

function connect(args) {
  const definition = protoLoader.loadSync("npuzzle/v1/solver.proto", {
    includeDirs: [args.proto], keepCase: true, longs: String, enums: String, defaults: false, oneofs: true,
  });
  const { SolverService } = grpc.loadPackageDefinition(definition).npuzzle.v1;
  let credentials = grpc.credentials.createInsecure();
  const options = {};
  if (args["tls-ca"]) {
    credentials = grpc.credentials.createSsl(readFileSync(args["tls-ca"]));
    if (args["tls-server-name"]) options["grpc.ssl_target_name_override"] = args["tls-server-name"];
  }
  return new SolverService(args.server, credentials, options);
}

function unary(client, method, request, metadata) {
  const deadline = new Date(Date.now() + 30000);
  return new Promise((resolve, reject) =>
    client[method](request, metadata, { deadline }, (error, response) => (error ? reject(error) : resolve(response))));
}

async function run(args, command, rest) {
  const oneId = () => {
    if (rest.length !== 1) throw new UsageError(`${command} takes one JOB_ID`);
    return rest[0];
  };
  if (!["solve", "submit", "list"].includes(command) && !["watch", "get", "cancel"].includes(command)) {
    throw new UsageError(`unknown command "${command}"`);
  }
  if (["solve", "submit", "list"].includes(command) && rest.length) {
    throw new UsageError(`${command} takes no arguments (got "${rest[0]}")`);
  }
  const request = command === "solve" || command === "submit" ? { spec: spec(args) } : null;
  const client = connect(args);
  const metadata = new grpc.Metadata();
  if (args.token) metadata.set("authorization", `Bearer ${args.token}`);
  try {
    switch (command) {
      case "submit":
        console.log((await unary(client, "SubmitJob", request, metadata)).id);
        return 0;
      case "solve":
      case "watch": {
        const stream = command === "solve" ? client.Solve(request, metadata)
                                           : client.WatchJob({ job_id: oneId() }, metadata);
        const job = await follow(args, stream);
        if (!args.json && job) printResult(args, job);
        return exitCode(job);
      }
      case "get":
        printResult(args, await unary(client, "GetJob", { job_id: oneId() }, metadata));
        return 0;
      case "cancel": {
        const job = await unary(client, "CancelJob", { job_id: oneId() }, metadata);
        console.log(`${job.id} ${stateName(job.state)}`);
        return 0;
      }
      case "list": {
        const states = args.state.map((s) => {
          const name = `JOB_STATE_${s.toUpperCase()}`;
          if (!["QUEUED", "RUNNING", "DONE", "FAILED", "CANCELLED"].includes(s.toUpperCase())) {
            throw new UsageError(`state "${s}" is not one of queued, running, done, failed, cancelled`);
          }
          return name;
        });
        // A filtered listing may come back in short pages: page on until
        // there are page-size jobs or no more.
        const wanted = Number(number(args, "page-size"));
        const jobs = [];
        let pageToken = "";
        do {
          const response = await unary(client, "ListJobs", {
            states, labels: labels(args.label), page_size: wanted - jobs.length, page_token: pageToken,
          }, metadata);
          jobs.push(...(response.jobs || []));
          pageToken = response.next_page_token || "";
        } while (pageToken !== "" && jobs.length < wanted);
        for (const job of jobs) {
          console.log(args.json ? JSON.stringify(job) : `${job.id} ${stateName(job.state)} ${(job.result || {}).status || ""}`);
        }
        return 0;
      }
    }
  } finally {
    client.close();
  }
  return 2;
}

async function main() {
  let parsed;
  try {
    parsed = parseArgs({ options: OPTIONS, allowPositionals: true });
  } catch (e) {
    console.error(`npuzzle.mjs: ${e.message}\n${USAGE}`);
    return 2;
  }
  const { values: args, positionals } = parsed;
  if (args.help || positionals.length === 0) {
    (args.help ? console.log : console.error)(USAGE);
    return args.help ? 0 : 2;
  }
  try {
    return await run(args, positionals[0], positionals.slice(1));
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`npuzzle.mjs: ${e.message}`);
    } else if (e.code !== undefined && grpc.status[e.code]) {
      console.error(`npuzzle.mjs: ${grpc.status[e.code]}: ${e.details}${hint(args, e)}`);
    } else {
      console.error(`npuzzle.mjs: ${e.message}`);
    }
    return 2;
  }
}

process.exitCode = await main();
