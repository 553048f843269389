// The web page in a real browser: Debian's Chromium, headless, driven by
// puppeteer-core. Starts its own server with a local worker on loopback,
// then plays the page as a user would: moves tiles by click and by arrow
// key, draws a random board, solves it, and waits for the playback to
// reach the goal. Saves screenshots beside the build's other artefacts.
//
//   node page_test.mjs --bin BUILD/bin --out DIR [--chromium /usr/bin/chromium]
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import assert from "node:assert/strict";
import puppeteer from "puppeteer-core";

const { values: args } = parseArgs({
  options: {
    bin: { type: "string" },
    out: { type: "string" },
    chromium: { type: "string", default: "/usr/bin/chromium" },
  },
});
assert.ok(args.bin && args.out, "usage: page_test.mjs --bin BUILD/bin --out DIR");
mkdirSync(args.out, { recursive: true });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function startServer(work) {
  const ports = join(work, "ports");
  const server = spawn(join(args.bin, "npuzzle-server"), [
    `--data-dir=${work}/data`, "--listen=127.0.0.1:0", "--worker-listen=127.0.0.1:0", "--metrics-listen=",
    "--http-listen=127.0.0.1:0", "--local-workers=1", "--worker-progress-ms=100", `--port-file=${ports}`,
  ], { stdio: ["ignore", "inherit", "inherit"] });
  for (let i = 0; i < 300 && !existsSync(ports); i++) await sleep(50);
  const fields = readFileSync(ports, "utf8").trim().split(/\s+/);
  return { server, url: `http://127.0.0.1:${fields[3]}/` };
}

const boardOf = (page) => page.$eval("#board", (b) => b.dataset.tiles);

async function check(page, url) {
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(url, { waitUntil: "networkidle0" });
  assert.equal(await boardOf(page), "1 2 3 4 5 6 7 8 0", "a 3x3 page starts at the standard goal");

  // A click on the tile left of the blank slides it right; an arrow key
  // slides the tile the other way back.
  await page.click('#board [data-tile="8"]');
  assert.equal(await boardOf(page), "1 2 3 4 5 6 7 0 8");
  await page.keyboard.press("ArrowLeft");
  assert.equal(await boardOf(page), "1 2 3 4 5 6 7 8 0");
  // A tile that does not touch the blank stays put.
  await page.click('#board [data-tile="1"]');
  assert.equal(await boardOf(page), "1 2 3 4 5 6 7 8 0");

  // Another shape and goal preset lays the goal out.
  await page.select("#rows", "4");
  await page.select("#cols", "5");
  assert.equal((await boardOf(page)).split(" ").length, 20);
  await page.select("#rows", "3");
  await page.select("#cols", "3");
  await page.select("#goal-preset", "snail");
  assert.equal(await boardOf(page), "1 2 3 8 0 4 7 6 5");
  await page.select("#goal-preset", "standard");

  // "Random board" draws uniformly from the solvable boards: on 2x2, the
  // 12 boards a breadth-first search from the goal reaches, each about
  // equally often, and nothing else.
  await page.select("#rows", "2");
  await page.select("#cols", "2");
  const reachable = new Set(["1 2 3 0"]);
  for (let frontier = ["1 2 3 0"]; frontier.length;) {
    const next = [];
    for (const board of frontier) {
      const t = board.split(" ").map(Number), b = t.indexOf(0);
      for (const n of [b - 2, b + 2, b % 2 ? b - 1 : b + 1]) {
        if (n < 0 || n > 3) continue;
        const u = t.slice();
        [u[b], u[n]] = [u[n], u[b]];
        const key = u.join(" ");
        if (!reachable.has(key)) { reachable.add(key); next.push(key); }
      }
    }
    frontier = next;
  }
  assert.equal(reachable.size, 12);
  const boards = await page.evaluate(() => Array.from({ length: 1200 }, () => {
    document.getElementById("random").click();
    return document.getElementById("board").dataset.tiles;
  }));
  const drawn = new Map();
  for (const board of boards) drawn.set(board, (drawn.get(board) || 0) + 1);
  for (const [board, count] of drawn) {
    assert.ok(reachable.has(board), `random board ${board} cannot reach the goal`);
    assert.ok(count > 50 && count < 150, `board ${board} drawn ${count} times in 1200 (expected about 100)`);
  }
  assert.equal(drawn.size, 12, "every solvable 2x2 board is drawn");
  await page.select("#rows", "3");
  await page.select("#cols", "3");

  await page.click("#shuffle");
  assert.notEqual(await boardOf(page), "1 2 3 4 5 6 7 8 0", "40 random moves leave the goal");

  // A uniformly random board, solved optimally, played back to the goal.
  await page.click("#random");
  const start = await boardOf(page);
  await page.select("#algorithm", "astar");
  await page.select("#heuristic", "manhattan");
  await page.click("#solve");
  await page.waitForFunction(() => /solved/.test(document.getElementById("status").textContent), { timeout: 30000 });
  await page.screenshot({ path: join(args.out, "web-page-solved.png"), fullPage: true });
  await page.$eval("#speed", (s) => { s.value = "20"; });
  await page.waitForSelector('#playback[data-at-end="true"]', { timeout: 60000 });
  assert.equal(await boardOf(page), "1 2 3 4 5 6 7 8 0", "the playback ends at the goal");
  const status = await page.$eval("#status", (s) => s.textContent);
  assert.match(status, /^solved: \d+ moves \(optimal\)$/);
  const moves = await page.$eval("#moves", (m) => m.textContent);
  assert.equal(status.match(/\d+/)[0], String(moves.startsWith("(") ? 0 : moves.length));
  assert.notEqual(await page.$eval("#stat-expanded", (e) => e.textContent), "-");
  await page.screenshot({ path: join(args.out, "web-page.png"), fullPage: true });

  // Step controls walk the same path back to the start.
  await page.click("#first");
  assert.equal(await boardOf(page), start);
  assert.equal(await page.$eval("#position", (p) => p.textContent), `move 0 of ${moves.startsWith("(") ? 0 : moves.length}`);
  if (!moves.startsWith("(")) {
    await page.click("#forward");
    assert.equal(await page.$eval("#position", (p) => p.textContent), `move 1 of ${moves.length}`);
  }

  // A 7x7, and a 12x16 (the largest boards only the anytime solver takes),
  // with the default algorithm (auto): an answer within seconds, shown and
  // playable while the search goes on, with its lower bound, on a board
  // that fits its panel.
  for (const [rows, cols] of [["7", "7"], ["12", "16"]]) {
    await page.select("#rows", rows);
    await page.select("#cols", cols);
    await page.click("#random");
    await page.select("#algorithm", "auto");
    // Longer than the wait for the first answer below, so the job is still
    // running when the page is checked: with 4 s, a loaded machine once
    // delivered the first answer with the result, whose playback had begun.
    await page.$eval("#max-time", (e) => { e.value = "6000"; });
    await page.click("#solve");
    await page.waitForFunction(() => /^\d+ moves/.test(document.getElementById("stat-best").textContent) &&
                                     document.getElementById("moves").textContent !== "", { timeout: 5000 });
    assert.match(await page.$eval("#moves", (m) => m.textContent), /^[UDLR]+$/);
    assert.match(await page.$eval("#stat-lower", (e) => e.textContent), /^\d+$/);
    assert.match(await page.$eval("#position", (p) => p.textContent), /^move 0 of \d+$/);
    await page.screenshot({ path: join(args.out, `web-page-anytime-${rows}x${cols}.png`), fullPage: true });
    const spill = await page.$eval("#board", (b) => b.scrollWidth - b.clientWidth);
    assert.ok(spill <= 0, `the ${rows}x${cols} board spills ${spill}px out of its panel`);
    await page.waitForFunction(() => /^solved: \d+ moves, lower bound \d+$/.test(document.getElementById("status").textContent),
                               { timeout: 30000 });
  }
  await page.$eval("#max-time", (e) => { e.value = ""; });

  // A long job shows live progress and its chart, and stops on Cancel.
  await page.select("#rows", "4");
  await page.select("#cols", "4");
  await page.click("#random");
  await page.select("#algorithm", "idastar");
  await page.select("#heuristic", "misplaced");
  await page.click("#solve");
  await page.waitForFunction(() => Number(document.getElementById("stat-expanded").textContent.replace(/\D/g, "")) > 0 &&
                                   /running/.test(document.getElementById("status").textContent), { timeout: 30000 });
  // IDA* estimates its threshold once two have finished.
  await page.waitForFunction(() => /^~\d+% of bound \d+(, ~\S+ (s|min|h) left)?$/.test(
    document.getElementById("stat-estimate").textContent), { timeout: 20000 });
  await sleep(1500);
  await page.screenshot({ path: join(args.out, "web-page-progress.png"), fullPage: true });
  assert.match(await page.$eval("#stat-rate", (e) => e.textContent), /^[\d,]+ states\/s$/);
  // The chart has its axes: labels drawn left of the plot and below it.
  const inked = await page.$eval("#chart", (c) => {
    const g = c.getContext("2d");
    const count = (x, y, w, h) => g.getImageData(x, y, w, h).data.filter((v, i) => i % 4 === 3 && v > 0).length;
    return { left: count(0, 0, 90, c.height - 40), bottom: count(96, c.height - 34, c.width - 96, 34) };
  });
  assert.ok(inked.left > 50 && inked.bottom > 50, `axis labels: ${JSON.stringify(inked)}`);
  await page.click("#cancel");
  await page.waitForFunction(() => /^cancelled/.test(document.getElementById("status").textContent), { timeout: 10000 });
  assert.equal(await page.$eval("#status", (s) => s.textContent), "cancelled");

  // The recent jobs list shows the job, and refreshes by itself: a job
  // submitted elsewhere appears within a few seconds.
  await page.waitForFunction(() => /4x4cancelled/.test(document.querySelector("#jobs tr")?.textContent || ""),
                             { timeout: 10000 });
  const rows = await page.$$eval("#jobs tr", (trs) => trs.map((r) => r.textContent));
  assert.match(rows[1], /12x16done\d+$/);
  assert.match(rows[2], /7x7done\d+$/);
  assert.match(rows[3], /3x3done\d+$/);
  const elsewhere = await page.evaluate(async () => (await (await fetch("/v1/jobs", {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ spec: { start: { text: "8 1 3 4 0 2 7 6 5" } } }) })).json()).id);
  await page.waitForFunction((id) => document.querySelector("#jobs tr")?.textContent.startsWith(id), { timeout: 10000 },
                             elsewhere);

  // A job picked from the list shows its own statistics, not the last one's.
  await page.$$eval("#jobs tr", (trs) => trs.find((r) => /3x3done/.test(r.textContent)).click());
  const picked = await page.$$eval("#jobs tr", (trs) => trs.find((r) => /3x3done/.test(r.textContent)).cells[0].textContent);
  assert.equal(await page.$eval("#stat-job", (e) => e.textContent), picked);
  assert.match(await page.$eval("#status", (s) => s.textContent), /^solved: \d+ moves \(optimal\)$/);
  assert.equal(await page.$eval("#stat-bound", (e) => e.textContent), "-");

  // Narrow screens: nothing runs off the side.
  await page.setViewport({ width: 360, height: 740 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page is ${overflow}px wider than a 360px window`);
  // Table headers stay on one line ("Board", not "Boar" over "d").
  const tall = await page.$$eval("#jobs", (b) => [...b[0].closest("table").querySelectorAll("th")]
    .filter((th) => th.getClientRects()[0].height > 1.6 * parseFloat(getComputedStyle(th).fontSize) + 8)
    .map((th) => th.textContent));
  assert.deepEqual(tall, [], "headers broken over lines");
  await page.screenshot({ path: join(args.out, "web-page-narrow.png"), fullPage: true });
  assert.deepEqual(errors, [], "no script errors");
}

const work = mkdtempSync(join(tmpdir(), "npuzzle-browser-"));
const { server, url } = await startServer(work);
const browser = await puppeteer.launch({
  executablePath: args.chromium,
  headless: true,
  // Root in CI has no user namespace sandbox to give.
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
let failed = false;
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1200, height: 900 });
  await check(page, url);
  console.log("web page: all checks passed; screenshots in", args.out);
} catch (e) {
  failed = true;
  console.error("web page test failed:", e);
} finally {
  await browser.close();
  server.kill("SIGTERM");
  await new Promise((r) => server.on("exit", r));
  rmSync(work, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
