// Checks a Docker Compose file of deploy/ without Docker: each npuzzle
// service's NPUZZLE_* settings are real flags of its program, its root
// filesystem is read-only with the data directory on a volume or tmpfs,
// workers dial a coordinator's worker port by a name the network gives it,
// and where several coordinators share a database each stands by,
// advertises its own name, answers to the name the workers dial, and
// publishes its own host ports.
//
//   node validate_compose.mjs --compose deploy/docker-compose.ha.yml \
//     --server-flags server.txt --worker-flags worker.txt
//
// Prints every problem found and exits 1 if there was any.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { parse } from "yaml";
import { readProgramFlags, unknownSettings } from "./program_flags.mjs";

const { values: args } = parseArgs({
  options: { compose: { type: "string" }, "server-flags": { type: "string" }, "worker-flags": { type: "string" } },
});
const problems = [];
const problem = (where, what) => problems.push(`${args.compose}: ${where}: ${what}`);
const compose = parse(readFileSync(args.compose, "utf8"), { merge: true });
const programFlags = readProgramFlags(args["server-flags"], args["worker-flags"]);
const portOf = (address) => String(address ?? "").split(":").pop();
const services = Object.entries(compose.services ?? {});
const ofProgram = (program) => services.filter(([, s]) => s.command?.[0] === program);
const coordinators = ofProgram("npuzzle-server");
const workers = ofProgram("npuzzle-worker");
if (coordinators.length === 0) problem("services", "no coordinator (npuzzle-server)");
if (workers.length === 0) problem("services", "no workers (npuzzle-worker)");

for (const [name, s] of [...coordinators, ...workers]) {
  const env = s.environment ?? {};
  for (const p of unknownSettings(env, s.command[0], programFlags[s.command[0]])) problem(name, p);
  if (s.read_only !== true) problem(name, "root filesystem is writable");
  const dataDir = env.NPUZZLE_DATA_DIR;
  const mounted = [...(s.volumes ?? []).map((v) => String(v).split(":")[1]), ...(s.tmpfs ?? [])];
  if (dataDir && !mounted.some((m) => dataDir.startsWith(m))) {
    problem(name, `NPUZZLE_DATA_DIR ${dataDir} is on the read-only root filesystem`);
  }
}

// The names a coordinator answers to on the network: its own and aliases.
const namesOf = ([name, s]) => [name, ...(s.networks?.default?.aliases ?? [])];
for (const [name, s] of workers) {
  const [host, port] = String(s.environment?.NPUZZLE_COORDINATOR).split(":");
  const reached = coordinators.filter((c) => namesOf(c).includes(host));
  if (reached.length === 0) problem(name, `NPUZZLE_COORDINATOR ${host} names no coordinator`);
  for (const [cname, c] of reached) {
    if (portOf(c.environment?.NPUZZLE_WORKER_LISTEN) !== port) problem(name, `port ${port} is not ${cname}'s worker port`);
  }
  if (coordinators.length > 1 && reached.length !== coordinators.length) {
    problem(name, `NPUZZLE_COORDINATOR ${host} reaches ${reached.length} of ${coordinators.length} coordinators`);
  }
}

if (coordinators.length > 1) {
  const published = new Set();
  for (const [name, s] of coordinators) {
    const env = s.environment ?? {};
    if (!env.NPUZZLE_STORE && !env.NPUZZLE_STORE_FILE) problem(name, "several coordinators without a PostgreSQL store");
    if (env.NPUZZLE_STANDBY !== "true") problem(name, "is not --standby (NPUZZLE_STANDBY)");
    if (env.NPUZZLE_ADVERTISE_HOST !== name) {
      problem(name, `advertises ${env.NPUZZLE_ADVERTISE_HOST}, not its own name: standbys cannot forward to it`);
    }
    for (const p of s.ports ?? []) {
      const host = String(p).split(":")[0];
      if (published.has(host)) problem(name, `host port ${host} is published twice`);
      published.add(host);
    }
  }
}

if (problems.length) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
console.log(`${args.compose}: ${services.length} services valid and consistent`);
