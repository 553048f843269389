// Checks one rendered overlay (kubectl kustomize output): every object
// against its Kubernetes API schema (kubernetes-models), then that the
// objects line up with each other and with the programs they run: labels
// and selectors, ports and probes, flags in ConfigMaps, drain times,
// memory ceilings, the autoscaler's target and metrics, and in the secured
// overlays TLS on both sides, secrets mounted read-only, the NetworkPolicy
// and cert-manager's certificates; volume claims that exist, and in the
// shared-tables overlay the workers' one ReadWriteMany table cache; with
// a PostgreSQL store (the ha overlay), replicated coordinators that stand
// by, forward, and are spared by a disruption budget.
//
//   node validate_manifests.mjs --manifests rendered.yaml --overlay prod \
//     --server-flags server.txt --worker-flags worker.txt [--metrics metrics.txt]
//
// Prints every problem found and exits 1 if there was any.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { parseAllDocuments } from "yaml";
import { readProgramFlags, unknownSettings } from "./program_flags.mjs";

const { values: args } = parseArgs({
  options: {
    manifests: { type: "string" },
    overlay: { type: "string" },
    "server-flags": { type: "string" },
    "worker-flags": { type: "string" },
    metrics: { type: "string" },
  },
});

const problems = [];
const problem = (where, what) => problems.push(`${args.overlay}: ${where}: ${what}`);

const docs = parseAllDocuments(readFileSync(args.manifests, "utf8"))
  .map((d) => d.toJS())
  .filter((d) => d);
const id = (o) => `${o.kind}/${o.metadata?.name}`;

// --- schemas ---
const modules = {
  v1: "kubernetes-models/v1",
  "apps/v1": "kubernetes-models/apps/v1",
  "autoscaling/v2": "kubernetes-models/autoscaling/v2",
  "policy/v1": "kubernetes-models/policy/v1",
  "keda.sh/v1alpha1": "@kubernetes-models/keda/keda.sh/v1alpha1",
  "networking.k8s.io/v1": "kubernetes-models/networking.k8s.io/v1",
  "cert-manager.io/v1": "@kubernetes-models/cert-manager/cert-manager.io/v1",
};
for (const o of docs) {
  const module = modules[o.apiVersion];
  const model = module && (await import(module))[o.kind];
  if (!model) {
    problem(id(o), `no schema for ${o.apiVersion} ${o.kind}`);
    continue;
  }
  try {
    new model(o).validate();
  } catch (e) {
    problem(id(o), `schema: ${e.message}`);
  }
}

// --- helpers ---
const byKind = (kind) => docs.filter((o) => o.kind === kind);
const find = (kind, name) => docs.find((o) => o.kind === kind && o.metadata?.name === name);
const workloads = docs.filter((o) => o.kind === "Deployment" || o.kind === "StatefulSet");
const matches = (selector, labels) =>
  Object.entries(selector ?? {}).every(([k, v]) => labels?.[k] === v) && Object.keys(selector ?? {}).length > 0;
const podsSelectedBy = (selector) => workloads.filter((w) => matches(selector, w.spec.template.metadata.labels));
const containers = (w) => w.spec.template.spec.containers;
const portOf = (address) => Number(String(address).split(":").pop());
// A port reference (name or number) resolved against a container's ports.
const containerPort = (c, ref) =>
  (c.ports ?? []).find((p) => p.name === ref || p.containerPort === ref)?.containerPort;
const programFlags = readProgramFlags(args["server-flags"], args["worker-flags"]);
// A container's settings: its ConfigMaps' data and its env, as the
// program reads them.
const settings = (w, c) => {
  const env = {};
  for (const from of c.envFrom ?? []) {
    const name = from.configMapRef?.name;
    const cm = find("ConfigMap", name);
    if (!cm) problem(id(w), `envFrom names ConfigMap ${name}, which does not exist`);
    Object.assign(env, cm?.data ?? {});
  }
  for (const e of c.env ?? []) env[e.name] = e.value;
  return env;
};
const quantity = (q) => {
  const m = String(q).match(/^([0-9.]+)(m|Ki|Mi|Gi|Ti)?$/);
  if (!m) return NaN;
  const scale = { m: 1e-3, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 }[m[2]] ?? 1;
  return Number(m[1]) * scale;
};

// --- namespace and labels ---
const namespaces = byKind("Namespace").map((n) => n.metadata.name);
if (namespaces.length !== 1) problem("Namespace", `expected one Namespace object, found ${namespaces.length}`);
for (const o of docs) {
  if (o.kind !== "Namespace" && o.metadata.namespace !== namespaces[0]) {
    problem(id(o), `namespace ${o.metadata.namespace}, not the overlay's ${namespaces[0]}`);
  }
  if (o.metadata.labels?.["app.kubernetes.io/part-of"] !== "npuzzle") problem(id(o), "no part-of: npuzzle label");
}

// --- workloads: selectors, security, resources, probes, settings ---
const coordinators = workloads.filter((w) => containers(w)[0]?.command?.[0] === "npuzzle-server");
const workers = workloads.filter((w) => containers(w)[0]?.command?.[0] === "npuzzle-worker");
// SQLite on a volume allows one coordinator; PostgreSQL several, one active.
const sharedStore = (w) => {
  const env = settings(w, containers(w)[0]);
  return Boolean(env.NPUZZLE_STORE || env.NPUZZLE_STORE_FILE);
};
if (coordinators.length !== 1) {
  problem("coordinator", `expected one workload running npuzzle-server, found ${coordinators.length}`);
} else if (!sharedStore(coordinators[0]) &&
           (coordinators[0].kind !== "StatefulSet" || coordinators[0].spec.replicas !== 1)) {
  problem("coordinator", "with SQLite, expected exactly one StatefulSet running npuzzle-server with one replica");
} else if (sharedStore(coordinators[0]) && !(coordinators[0].kind === "Deployment" && coordinators[0].spec.replicas >= 2)) {
  problem("coordinator", "with PostgreSQL, expected a Deployment of at least two replicas running npuzzle-server");
}
if (workers.length !== 1 || workers[0].kind !== "Deployment") {
  problem("workers", "expected exactly one Deployment running npuzzle-worker");
}
for (const w of workloads) {
  const pod = w.spec.template.spec;
  if (!matches(w.spec.selector.matchLabels, w.spec.template.metadata.labels)) {
    problem(id(w), "selector does not match its own pod template's labels");
  }
  if (pod.securityContext?.runAsNonRoot !== true) problem(id(w), "pods may run as root");
  if (pod.enableServiceLinks !== false) problem(id(w), "service links would add NPUZZLE_* variables to the flags");
  for (const c of containers(w)) {
    const where = `${id(w)} container ${c.name}`;
    const sc = c.securityContext ?? {};
    if (sc.readOnlyRootFilesystem !== true) problem(where, "root filesystem is writable");
    if (sc.allowPrivilegeEscalation !== false) problem(where, "privilege escalation allowed");
    if (!(sc.capabilities?.drop ?? []).includes("ALL")) problem(where, "capabilities not dropped");
    for (const kind of ["requests", "limits"]) {
      for (const r of ["cpu", "memory"]) {
        if (!c.resources?.[kind]?.[r]) problem(where, `no ${r} ${kind}`);
      }
    }
    for (const probeName of ["readinessProbe", "livenessProbe", "startupProbe"]) {
      const probe = c[probeName];
      if (!probe) continue;
      if (probe.exec) continue;
      const ref = probe.grpc?.port ?? probe.httpGet?.port ?? probe.tcpSocket?.port;
      if (containerPort(c, ref) === undefined) problem(where, `${probeName} port ${ref} is not a container port`);
    }
    const program = c.command?.[0];
    const flags = programFlags[program];
    const env = settings(w, c);
    // The rest is about npuzzle's own programs (not, say, PostgreSQL).
    if (!flags) continue;
    for (const p of unknownSettings(env, program, flags)) problem(where, p);
    // The metrics port: served, declared, and where the scrape annotation points.
    const metricsPort = portOf(env.NPUZZLE_METRICS_LISTEN ?? "");
    if (!metricsPort || containerPort(c, metricsPort) === undefined) {
      problem(where, `metrics port ${metricsPort} (NPUZZLE_METRICS_LISTEN) is not a container port`);
    }
    if (Number(w.spec.template.metadata.annotations?.["prometheus.io/port"]) !== metricsPort) {
      problem(where, "prometheus.io/port does not name the metrics port");
    }
    // The pod must outlive the program's drain.
    const drainMs = Number(env.NPUZZLE_DRAIN_GRACE_MS);
    const handBackMs = program === "npuzzle-worker" ? 2000 : 0;
    if (!(pod.terminationGracePeriodSeconds * 1000 >= drainMs + handBackMs + 3000)) {
      problem(where, `terminationGracePeriodSeconds ${pod.terminationGracePeriodSeconds} does not cover a ${drainMs} ms drain`);
    }
    for (const m of c.volumeMounts ?? []) {
      if (!(pod.volumes ?? []).some((v) => v.name === m.name) &&
          !(w.spec.volumeClaimTemplates ?? []).some((t) => t.metadata.name === m.name)) {
        problem(where, `mounts volume ${m.name}, which the pod does not have`);
      }
    }
    if (env.NPUZZLE_DATA_DIR && !(c.volumeMounts ?? []).some((m) => env.NPUZZLE_DATA_DIR.startsWith(m.mountPath))) {
      problem(where, `NPUZZLE_DATA_DIR ${env.NPUZZLE_DATA_DIR} is on the read-only root filesystem`);
    }
  }
}

// --- coordinator: probes on the client port, the worker port, its Services ---
const coordinator = coordinators[0];
const coordinatorContainer = coordinator && containers(coordinator)[0];
const coordinatorEnv = coordinator ? settings(coordinator, coordinatorContainer) : {};
const replicated = coordinator && sharedStore(coordinator);
if (coordinator) {
  const c = coordinatorContainer;
  const clientPort = portOf(coordinatorEnv.NPUZZLE_LISTEN);
  const metricsPort = portOf(coordinatorEnv.NPUZZLE_METRICS_LISTEN);
  for (const [probeName, path] of [["readinessProbe", "/readyz"], ["livenessProbe", "/healthz"]]) {
    const probe = c[probeName];
    if (coordinatorEnv.NPUZZLE_TLS_CERT || replicated) {
      // Kubernetes' gRPC probes speak no TLS; and a standby's client port
      // answers for the active coordinator, not for the pod.
      if (probe?.httpGet?.path !== path || containerPort(c, probe.httpGet.port) !== metricsPort) {
        const why = replicated ? "a standby's client port answers for the active coordinator"
                               : "the client port speaks TLS";
        problem(id(coordinator), `${probeName} must GET ${path} on the metrics port: ${why}`);
      }
    } else if (!probe?.grpc) {
      problem(id(coordinator), `${probeName} is not a gRPC health probe`);
    } else if (containerPort(c, probe.grpc.port) !== clientPort) {
      problem(id(coordinator), `${probeName} checks port ${probe.grpc.port}, not the client port ${clientPort}`);
    }
  }
  if (containerPort(c, portOf(coordinatorEnv.NPUZZLE_WORKER_LISTEN)) === undefined) {
    problem(id(coordinator), "the worker port (NPUZZLE_WORKER_LISTEN) is not a container port");
  }
  if (coordinatorEnv.NPUZZLE_LOCAL_WORKERS !== "0") problem(id(coordinator), "should run no local workers");
  if (!replicated) {
    const governing = find("Service", coordinator.spec.serviceName);
    if (!governing || governing.spec.clusterIP !== "None") {
      problem(id(coordinator), `serviceName ${coordinator.spec.serviceName} is not a headless Service here`);
    }
    if (!(coordinator.spec.volumeClaimTemplates ?? []).some((t) =>
      (c.volumeMounts ?? []).some((m) => m.name === t.metadata.name && coordinatorEnv.NPUZZLE_DATA_DIR === m.mountPath))) {
      problem(id(coordinator), "NPUZZLE_DATA_DIR is not on the persistent volume");
    }
  } else {
    // Replicas beyond the active one wait, forwarding to it at the address
    // it advertised: its pod IP, which each pod knows only from the API.
    if (coordinatorEnv.NPUZZLE_STANDBY !== "true") problem(id(coordinator), "replicas are not --standby (NPUZZLE_STANDBY)");
    const advertised = (c.env ?? []).find((e) => e.name === "NPUZZLE_ADVERTISE_HOST");
    if (advertised?.valueFrom?.fieldRef?.fieldPath !== "status.podIP") {
      problem(id(coordinator), "NPUZZLE_ADVERTISE_HOST is not the pod's IP (status.podIP): standbys cannot forward");
    }
    const rolling = coordinator.spec.strategy?.rollingUpdate;
    if (coordinator.spec.strategy?.type === "Recreate" || String(rolling?.maxUnavailable ?? "25%") !== "0") {
      problem(id(coordinator), "a rollout may stop a coordinator before its replacement is ready (maxUnavailable)");
    }
    if (!byKind("PodDisruptionBudget").some((p) => podsSelectedBy(p.spec.selector.matchLabels).includes(coordinator))) {
      problem(id(coordinator), "no PodDisruptionBudget selects the coordinators");
    }
  }
}

// --- Services: each selects pods and reaches declared ports ---
for (const s of byKind("Service")) {
  const pods = podsSelectedBy(s.spec.selector);
  if (pods.length === 0) problem(id(s), "selects no pods");
  for (const p of s.spec.ports) {
    for (const w of pods) {
      if (!containers(w).some((c) => containerPort(c, p.targetPort ?? p.port) !== undefined)) {
        problem(id(s), `port ${p.name} targets ${p.targetPort}, which ${id(w)} does not declare`);
      }
    }
  }
}

// --- workers dial the coordinator's worker port by Service DNS ---
for (const w of workers) {
  const env = settings(w, containers(w)[0]);
  const [host, port] = String(env.NPUZZLE_COORDINATOR).split(":");
  const service = find("Service", host.split(".")[0]);
  const servicePort = service?.spec.ports.find((p) => p.port === Number(port));
  if (!servicePort) {
    problem(id(w), `NPUZZLE_COORDINATOR ${env.NPUZZLE_COORDINATOR} is no Service port here`);
  } else if (!coordinator || !podsSelectedBy(service.spec.selector).includes(coordinator) ||
             containerPort(coordinatorContainer, servicePort.targetPort) !== portOf(coordinatorEnv.NPUZZLE_WORKER_LISTEN)) {
    problem(id(w), `NPUZZLE_COORDINATOR ${env.NPUZZLE_COORDINATOR} does not reach the coordinator's worker port`);
  }
  // No job the coordinator admits may need more memory than a worker has.
  const ceilingMb = Number(coordinatorEnv.NPUZZLE_MAX_MEMORY_MB_CEILING);
  const limit = quantity(containers(w)[0].resources?.limits?.memory);
  if (!(ceilingMb > 0 && ceilingMb * 2 ** 20 * Number(env.NPUZZLE_CONCURRENCY ?? 1) < limit)) {
    problem(id(w), `memory limit ${containers(w)[0].resources?.limits?.memory} is not above the job memory ceiling`);
  }
  const threads = Number(env.NPUZZLE_MAX_SEARCH_THREADS);
  if (!(threads >= 1 && threads <= Math.ceil(quantity(containers(w)[0].resources?.limits?.cpu)))) {
    problem(id(w), `NPUZZLE_MAX_SEARCH_THREADS ${threads} does not fit the CPU limit`);
  }
}

// --- security: files from read-only Secrets, TLS on both sides, the
// NetworkPolicy, and cert-manager's certificates where it issues them ---
const fileSettings = {
  "npuzzle-server": ["NPUZZLE_TLS_CERT", "NPUZZLE_TLS_KEY", "NPUZZLE_WORKER_CLIENT_CA", "NPUZZLE_AUTH_TOKENS",
                     "NPUZZLE_STORE_FILE"],
  "npuzzle-worker": ["NPUZZLE_TLS_CA", "NPUZZLE_TLS_CERT", "NPUZZLE_TLS_KEY"],
};
const secretOf = {};  // setting's file -> the Secret it comes from
for (const w of workloads) {
  const c = containers(w)[0];
  const env = settings(w, c);
  for (const key of fileSettings[c.command?.[0]] ?? []) {
    const file = env[key];
    if (!file) continue;
    const where = `${id(w)} ${key} ${file}`;
    const mount = (c.volumeMounts ?? []).find((m) => file.startsWith(`${m.mountPath}/`));
    const volume = (w.spec.template.spec.volumes ?? []).find((v) => v.name === mount?.name);
    if (!mount) problem(where, "is on no mounted volume");
    else if (mount.readOnly !== true) problem(where, `is on ${mount.name}, which is not mounted read-only`);
    else if (!volume?.secret) problem(where, `is on ${mount.name}, which is not a Secret`);
    else secretOf[`${id(w)} ${key}`] = volume.secret.secretName;
  }
}
const secured = ["secure", "cert-manager"].includes(args.overlay);
if (secured) {
  for (const key of fileSettings["npuzzle-server"].filter((k) => k !== "NPUZZLE_STORE_FILE")) {
    if (!coordinatorEnv[key]) problem(id(coordinator), `${key} is not set: the ${args.overlay} overlay must set it`);
  }
}
if (coordinatorEnv.NPUZZLE_TLS_CERT) {
  for (const w of workers) {
    const env = settings(w, containers(w)[0]);
    if (!env.NPUZZLE_TLS_CA) problem(id(w), "dials the coordinator's TLS worker port in plaintext (no NPUZZLE_TLS_CA)");
    if (coordinatorEnv.NPUZZLE_WORKER_CLIENT_CA && !(env.NPUZZLE_TLS_CERT && env.NPUZZLE_TLS_KEY)) {
      problem(id(w), "has no client certificate, which the coordinator's worker port requires");
    }
  }
}
const policies = byKind("NetworkPolicy").filter((p) => coordinator && podsSelectedBy(p.spec.podSelector.matchLabels).includes(coordinator));
if (secured && policies.length === 0) problem("NetworkPolicy", "none selects the coordinator");
const workerPort = coordinator && portOf(coordinatorEnv.NPUZZLE_WORKER_LISTEN);
for (const p of policies) {
  for (const rule of p.spec.ingress ?? []) {
    const admitsWorkerPort = !rule.ports ||
      rule.ports.some((port) => containerPort(coordinatorContainer, port.port) === workerPort);
    if (!admitsWorkerPort) continue;
    const onlyWorkers = (rule.from ?? []).length > 0 && rule.from.every((f) =>
      f.podSelector && !f.namespaceSelector && !f.ipBlock &&
      podsSelectedBy(f.podSelector.matchLabels).every((w) => workers.includes(w)));
    if (!onlyWorkers) problem(id(p), "admits the worker port from pods other than the workers");
  }
}
const certificates = byKind("Certificate");
if (args.overlay === "cert-manager" || certificates.length > 0) {
  const issued = new Map(certificates.map((c) => [c.spec.secretName, c]));
  for (const [where, secret] of Object.entries(secretOf)) {
    if (where.endsWith("NPUZZLE_AUTH_TOKENS") || where.endsWith("NPUZZLE_STORE_FILE")) continue;
    if (!issued.has(secret)) problem(where, `Secret ${secret} is issued by no Certificate`);
  }
  for (const c of certificates) {
    if (!find(c.spec.issuerRef.kind ?? "Issuer", c.spec.issuerRef.name)) {
      problem(id(c), `issuer ${c.spec.issuerRef.name} does not exist here`);
    }
  }
  const serving = issued.get(secretOf[`${id(coordinator)} NPUZZLE_TLS_CERT`]);
  for (const w of workers) {
    const env = settings(w, containers(w)[0]);
    const name = env.NPUZZLE_TLS_SERVER_NAME || String(env.NPUZZLE_COORDINATOR).split(":")[0];
    if (serving && !(serving.spec.dnsNames ?? []).includes(name)) {
      problem(id(serving), `does not name ${name}, the host ${id(w)} checks`);
    }
    const client = issued.get(secretOf[`${id(w)} NPUZZLE_TLS_CERT`]);
    if (client && !(client.spec.usages ?? []).includes("client auth")) problem(id(client), "is not for client auth");
  }
  if (serving && !(serving.spec.usages ?? []).includes("server auth")) problem(id(serving), "is not for server auth");
}

// --- volumes: claims exist, and one shared by many pods can be ---
for (const w of workloads) {
  for (const v of w.spec.template.spec.volumes ?? []) {
    const name = v.persistentVolumeClaim?.claimName;
    if (!name) continue;
    const claim = find("PersistentVolumeClaim", name);
    if (!claim) {
      problem(id(w), `volume ${v.name} claims ${name}, which does not exist`);
    } else if (w.kind === "Deployment" && !(claim.spec.accessModes ?? []).includes("ReadWriteMany")) {
      problem(id(w), `volume ${v.name} is shared by every worker pod but ${name} is not ReadWriteMany`);
    }
  }
}
if (args.overlay === "shared-tables") {
  const tables = workers[0]?.spec.template.spec.volumes?.find((v) => v.name === "pdb-cache");
  if (!tables?.persistentVolumeClaim || tables.emptyDir) problem("workers", "pattern tables are not on the shared claim");
}

// --- disruption budgets spare the workers (and replicated coordinators);
// autoscaling targets the workers ---
for (const pdb of byKind("PodDisruptionBudget")) {
  const selected = podsSelectedBy(pdb.spec.selector.matchLabels);
  if (!selected.every((w) => workers.includes(w)) && !(replicated && selected.every((w) => w === coordinator))) {
    problem(id(pdb), "selects pods other than the workers or replicated coordinators");
  }
}
if (!byKind("PodDisruptionBudget").some((p) => workers.every((w) => podsSelectedBy(p.spec.selector.matchLabels).includes(w)))) {
  problem("PodDisruptionBudget", "none selects the workers");
}
const autoscalers = [...byKind("HorizontalPodAutoscaler"), ...byKind("ScaledObject")];
if (autoscalers.length !== 1) {
  problem("autoscaling", `expected one autoscaler for the workers, found ${autoscalers.map(id).join(", ") || "none"}`);
}
for (const a of autoscalers) {
  const target = a.spec.scaleTargetRef;
  if (!workers.some((w) => w.kind === (target.kind ?? "Deployment") && w.metadata.name === target.name)) {
    problem(id(a), `scales ${target.kind ?? "Deployment"}/${target.name}, not the workers`);
  }
}
const expected = {
  dev: "HorizontalPodAutoscaler",
  prod: "HorizontalPodAutoscaler",
  keda: "ScaledObject",
  secure: "HorizontalPodAutoscaler",
  "cert-manager": "HorizontalPodAutoscaler",
  "shared-tables": "HorizontalPodAutoscaler",
  ha: "HorizontalPodAutoscaler",
}[args.overlay];
if (expected && !autoscalers.some((a) => a.kind === expected)) problem("autoscaling", `expected a ${expected}`);

// --- KEDA's query uses metrics the coordinator really exports ---
if (args.metrics) {
  const exported = new Set(
    readFileSync(args.metrics, "utf8")
      .split("\n")
      .map((l) => l.match(/^# TYPE (\S+) /)?.[1])
      .filter(Boolean),
  );
  for (const so of byKind("ScaledObject")) {
    for (const t of so.spec.triggers) {
      for (const name of (t.metadata?.query ?? "").match(/npuzzle_[a-z_]+/g) ?? []) {
        if (!exported.has(name)) problem(id(so), `query uses ${name}, which the coordinator does not export`);
      }
      if (!String(t.metadata?.query ?? "").includes(`namespace="${namespaces[0]}"`)) {
        problem(id(so), `query is not limited to namespace ${namespaces[0]}`);
      }
    }
  }
}

if (problems.length) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
console.log(`${args.overlay}: ${docs.length} objects valid and consistent`);
