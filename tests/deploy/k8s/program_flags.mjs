// What the manifest and Compose checks share: the flags each npuzzle
// program really has (read from its --help), and the NPUZZLE_* settings
// that name none of them.
import { readFileSync } from "node:fs";

const flagsOf = (file) =>
  new Set(
    readFileSync(file, "utf8")
      .split("\n")
      .map((l) => l.match(/^\s+--([a-z0-9-]+)\b/)?.[1]?.replaceAll("-", "_"))
      .filter(Boolean),
  );

// Each program's flags, spelled as their NPUZZLE_* settings are (a_b).
export const readProgramFlags = (serverHelp, workerHelp) => ({
  "npuzzle-server": flagsOf(serverHelp),
  "npuzzle-worker": flagsOf(workerHelp),
});

// One message for each NPUZZLE_* key of `env` that is no flag of `program`.
export const unknownSettings = (env, program, flags) =>
  Object.keys(env)
    .filter((k) => k.startsWith("NPUZZLE_"))
    .map((key) => [key, key.slice("NPUZZLE_".length).toLowerCase()])
    .filter(([, flag]) => !flags.has(flag))
    .map(([key, flag]) => `${key}: ${program} has no flag --${flag.replaceAll("_", "-")}`);
