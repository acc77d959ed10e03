// What the browser tests share: arguments, the built site served on
// 127.0.0.1, headless Chromium through playwright-core, a tiny test runner
// (each test prints "ok"/"FAIL", the process exits 1 on any failure), and
// the CLI runs the page is compared with.
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const root = path.resolve(__dirname, '..', '..');
const { startServer } = require(path.join(root, 'scripts', 'serve-web.js'));

function parseArgs(argv, defaults = {}) {
  const args = { chromium: process.env.CHROMIUM || '/usr/bin/chromium', ...defaults };
  for (let i = 0; i < argv.length; i += 2) args[argv[i].replace(/^--/, '').replace(/-(\w)/g, (_, c) => c.toUpperCase())] = argv[i + 1];
  for (const k of ['site', 'cli']) if (!args[k]) throw new Error(`missing --${k}`);
  return args;
}

function loadPlaywright() {
  try {
    return require(path.join(root, 'node_modules', 'playwright-core'));
  } catch {
    console.error('tests/web: playwright-core is missing: run `npm ci` in the repository root');
    process.exit(1);
  }
}

// The CLI's plan of a file: {text (the -o output), plan (parsed), report (stdout)}.
function cliPlan(cli, file, tmp, extra = []) {
  const out = path.join(tmp, `cli-${process.pid}-${Math.random().toString(36).slice(2)}.plan.json`);
  const r = spawnSync(cli, ['plan', file, ...extra, '-o', out], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`CLI failed on ${file}: ${r.stderr}`);
  const text = fs.readFileSync(out, 'utf8');
  fs.rmSync(out);
  return { text, plan: JSON.parse(text), report: r.stdout };
}

function cli(cliPath, args) {
  const r = spawnSync(cliPath, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`schedlab ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

async function launch(args) {
  const { chromium } = loadPlaywright();
  const site = path.resolve(args.site);
  const shots = args.shots ? path.resolve(args.shots) : fs.mkdtempSync(path.join(os.tmpdir(), 'schedlab-shots-'));
  fs.mkdirSync(shots, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'schedlab-web-'));
  const { server, url } = await startServer(site, 0);
  const browser = await chromium.launch({
    executablePath: args.chromium,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  const pageErrors = [];
  const newContext = async (options = {}) => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, acceptDownloads: true, ...options });
    context.on('page', (p) => {
      p.on('pageerror', (e) => pageErrors.push(`${p.url()}: ${e.message}`));
      p.on('console', (m) => { if (m.type() === 'error') pageErrors.push(`${p.url()}: console: ${m.text()}`); });
    });
    return context;
  };
  let failures = 0;
  // SCHEDLAB_WEB_ONLY=REGEX runs only the tests whose names match (while
  // working on one; CI runs them all).
  const only = process.env.SCHEDLAB_WEB_ONLY ? new RegExp(process.env.SCHEDLAB_WEB_ONLY) : null;
  const test = async (name, fn) => {
    if (only && !only.test(name) && name !== 'no page errors') return;
    const t0 = Date.now();
    try {
      await fn();
      console.log(`ok   ${name} (${Date.now() - t0} ms)`);
    } catch (e) {
      failures += 1;
      console.log(`FAIL ${name}: ${String(e && e.stack ? e.stack : e).split('\n').slice(0, 10).join('\n')}`);
    }
  };
  const finish = async () => {
    await test('no page errors', async () => {
      if (pageErrors.length) throw new Error(pageErrors.join('\n'));
    });
    await browser.close();
    server.close();
    fs.rmSync(tmp, { recursive: true, force: true });
    console.log(`screenshots: ${shots}`);
    if (failures) {
      console.log(`${failures} browser test(s) failed`);
      process.exit(1);
    }
    console.log('all browser tests passed');
  };
  return { browser, site, shots, tmp, url, newContext, pageErrors, test, finish };
}

// The peak the page shows (data-testid="peak-bytes"), or the error it shows instead.
async function peakText(p, timeout = 20000) {
  await p.locator('[data-testid="peak-bytes"], [data-testid="error"]').first().waitFor({ timeout });
  const err = await p.locator('[data-testid="error"]').count();
  if (err) throw new Error(`the page shows an error: ${await p.locator('[data-testid="error"]').textContent()}`);
  return (await p.locator('[data-testid="peak-bytes"]').textContent()).trim();
}

// Waits until the status line reports a finished plan.
async function planned(p, timeout = 60000) {
  await p.waitForFunction(() => /planned in/.test(document.getElementById('status').textContent), null, { timeout });
}

// Runs a test file's main(); an exception outside a test fails the run.
function run(main) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}

module.exports = { run, root, parseArgs, cliPlan, cli, launch, peakText, planned, startServer };
