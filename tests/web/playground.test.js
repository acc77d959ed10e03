// Browser tests of the built playground (scripts/build-web.sh OUT_DIR), with
// playwright-core driving the system's Chromium headless:
//   - every bundled example planned through ?graph=URL shows the native CLI's peak;
//   - the example menu, paste and file upload load graphs; hovering the chart
//     lists the live buffers; the exported plan equals the CLI's byte for byte;
//   - a malformed file shows the loader's message (the CLI's, without its prefix);
//   - the widget on docs.html renders its summary and curve;
//   - a bench (printed, not asserted): a 10k-node graph planned in the page.
// Screenshots go to --shots DIR for review.
//
// usage: node tests/web/playground.test.js --site OUT_DIR --cli PATH/schedlab [--shots DIR] [--bench-nodes N]
// (tests/web/workbench.test.js covers the working views: comm passes, cancel,
// keyboard, layouts, CORS, memory and timeline, search, trace, URL state.)
'use strict';
const assert = require('assert');
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const { parseArgs, cliPlan: cliPlanIn, launch, peakText, run } = require('./harness.js');

async function main() {
  const args = parseArgs(process.argv.slice(2), { benchNodes: '10000' });
  args.benchNodes = Number(args.benchNodes);
  const { site, shots, tmp, url, newContext, test, finish } = await launch(args);
  const cliPlan = (cliPath, file) => cliPlanIn(cliPath, file, tmp);
  const context = await newContext();
  const page = await context.newPage();

  // 1. Every bundled example, through ?graph=URL (default options): the final order's peak.
  const examples = JSON.parse(fs.readFileSync(path.join(site, 'examples', 'index.json'), 'utf8'));
  assert(examples.length > 0, 'no bundled examples');
  for (const ex of examples) {
    await test(`?graph=examples/${ex.file} shows the CLI's peak`, async () => {
      const expected = cliPlan(args.cli, path.join(site, 'examples', ex.file)).plan.final.peak_bytes;
      await page.goto(`${url}?graph=examples/${ex.file}`);
      const shown = await peakText(page);
      assert.strictEqual(shown, String(expected), `page shows ${shown}, the CLI says ${expected}`);
      if (/^((gpt2_2|fsdp_1)\.post|convnet_2\.pre)/.test(ex.file)) await page.screenshot({ path: path.join(shots, `playground-${ex.file.replace('.json', '')}.png`), fullPage: true });
    });
  }

  // 2. Hover on the chart lists live buffers, largest first.
  await test('hovering the memory curve lists the live buffers', async () => {
    await page.goto(`${url}?graph=examples/gpt2_2.post.json`);
    await peakText(page);
    await page.locator('#memory-chart .memory-chart .overlay').scrollIntoViewIfNeeded();
    const box = await page.locator('#memory-chart .memory-chart .overlay').boundingBox();
    await page.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2);
    await page.locator('.chart-tip').waitFor({ state: 'visible' });
    await page.waitForFunction(() => !/\(peak\)/.test(document.querySelector('.live-head').textContent));
    const sizes = await page.$$eval('.live-list .live-bytes', (els) => els.map((e) => e.textContent));
    assert(sizes.length > 0, 'no live buffers listed');
    await page.screenshot({ path: path.join(shots, 'playground-hover.png'), fullPage: false });
  });

  // 3. The example menu and the exported plan (byte for byte the CLI's).
  await test('example menu plans; exported plan JSON and Chrome trace equal the CLI output; timeline drawn', async () => {
    await page.goto(`${url}?example=none`);
    await page.waitForFunction(() => document.querySelectorAll('#example-select option').length > 1);
    await page.selectOption('#example-select', 'ddp_1.post.json');
    const shown = await peakText(page);
    const cli = cliPlan(args.cli, path.join(site, 'examples', 'ddp_1.post.json'), tmp);
    assert.strictEqual(shown, String(cli.plan.final.peak_bytes));
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-plan')]);
    const saved = path.join(tmp, 'exported.plan.json');
    await download.saveAs(saved);
    assert(fs.readFileSync(saved, 'utf8') === cli.text, 'the exported plan differs from `schedlab plan -o`');
    const cliTrace = path.join(tmp, 'cli.trace.json');
    const r = spawnSync(args.cli, ['plan', path.join(site, 'examples', 'ddp_1.post.json'), '-o', path.join(tmp, 'unused.json'), '--trace', cliTrace]);
    assert.strictEqual(r.status, 0);
    const [traceDownload] = await Promise.all([page.waitForEvent('download'), page.click('#export-trace')]);
    await traceDownload.saveAs(saved);
    assert(fs.readFileSync(saved, 'utf8') === fs.readFileSync(cliTrace, 'utf8'), 'the exported trace differs from `schedlab plan --trace`');
    await page.locator('#timeline [data-testid="timeline-canvas"]').waitFor();
    await page.screenshot({ path: path.join(shots, 'playground-ddp_1.post-timeline.png'), fullPage: true });
  });

  // 4. Options: one method only.
  await test('choosing methods re-plans with them', async () => {
    await page.goto(`${url}?graph=examples/mlp_2.pre.json`);
    await peakText(page);
    for (const m of ['lpmf', 'bfs', 'dfs']) await page.uncheck(`input[name="memory-method"][value="${m}"]`);
    await page.click('#plan-button');
    await page.waitForFunction(() => document.querySelectorAll('.methods tbody tr').length === 1);
    const r = spawnSync(args.cli, ['plan', path.join(site, 'examples', 'mlp_2.pre.json'), '--memory-methods', 'baseline', '-o', path.join(tmp, 'b.json')]);
    assert.strictEqual(r.status, 0);
    assert.strictEqual(await peakText(page), String(JSON.parse(fs.readFileSync(path.join(tmp, 'b.json'), 'utf8')).final.peak_bytes));
  });

  await test('comm passes chosen in the panel give the CLI\'s plan', async () => {
    const graph = path.join(site, 'examples', 'fsdp_1.post.json');
    await page.goto(`${url}?graph=examples/fsdp_1.post.json`);
    await peakText(page);
    for (const p of ['sink_waits', 'raise_comms']) await page.check(`input[name="comm-pass"][value="${p}"]`);
    await page.click('#plan-button');
    await page.waitForFunction(() => /\+ comm passes/.test(document.querySelector('.chart-legend').textContent));
    const out = path.join(tmp, 'comm.plan.json');
    const r = spawnSync(args.cli, ['plan', graph, '--comm-passes', 'sink_waits,raise_comms', '-o', out], { encoding: 'utf8' });
    assert.strictEqual(r.status, 0, r.stderr);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-plan')]);
    const saved = path.join(tmp, 'comm.exported.json');
    await download.saveAs(saved);
    assert(fs.readFileSync(saved, 'utf8') === fs.readFileSync(out, 'utf8'), 'the exported plan differs from `schedlab plan --comm-passes`');
    await page.screenshot({ path: path.join(shots, 'playground-fsdp_1.post-comm.png'), fullPage: true });
  });

  // 5. Paste.
  await test('pasted JSON plans', async () => {
    await page.goto(`${url}?example=none`);
    await page.locator('#memory-methods input').first().waitFor();
    const file = path.join(site, 'examples', 'convnet_2.pre.json');
    await page.click('#paste-button');
    await page.fill('#paste-text', fs.readFileSync(file, 'utf8'));
    await page.click('#paste-plan');
    assert.strictEqual(await peakText(page), String(cliPlan(args.cli, file).plan.final.peak_bytes));
  });

  await test('a dropped file plans', async () => {
    await page.goto(`${url}?example=none`);
    await page.locator('#memory-methods input').first().waitFor();
    const file = path.join(site, 'examples', 'ckpt_1.post.json');
    const text = fs.readFileSync(file, 'utf8');
    await page.evaluate((content) => {
      const dt = new DataTransfer();
      dt.items.add(new File([content], 'ckpt_1.post.json', { type: 'application/json' }));
      window.dispatchEvent(new DragEvent('dragenter', { dataTransfer: dt }));
      window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, cancelable: true }));
    }, text);
    assert.strictEqual(await peakText(page), String(cliPlan(args.cli, file).plan.final.peak_bytes));
    assert(await page.locator('#drop-overlay').isHidden(), 'the drop overlay stayed');
  });

  // 6. Malformed files show the loader's message, never a blank page.
  const bad = {
    'truncated.json': '{"format": "schedgraph/1", "nodes": [',
    'unknown-buffer.json': (() => {
      const g = JSON.parse(fs.readFileSync(path.join(site, 'examples', 'mlp_2.post.json'), 'utf8'));
      g.nodes[2].reads.push({ name: 'no_such_buffer' });
      return JSON.stringify(g);
    })(),
  };
  for (const [name, text] of Object.entries(bad)) {
    await test(`a malformed file (${name}) shows the CLI's message`, async () => {
      const file = path.join(tmp, name);
      fs.writeFileSync(file, text);
      const r = spawnSync(args.cli, ['plan', file], { encoding: 'utf8' });
      const prefix = `schedlab plan: ${file}: `;
      assert(r.status !== 0 && r.stderr.startsWith(prefix), `unexpected CLI result: ${r.stderr}`);
      await page.goto(`${url}?example=none`);
      await page.locator('#memory-methods input').first().waitFor();
      await page.setInputFiles('#file-input', file);
      const error = page.locator('[data-testid="error"]');
      await error.waitFor({ timeout: 20000 });
      assert.strictEqual(await error.textContent(), `${name}: ${r.stderr.trim().slice(prefix.length)}`);
      assert.strictEqual(await page.locator('[data-testid="peak-bytes"]').count(), 0);
      if (name === 'unknown-buffer.json') await page.screenshot({ path: path.join(shots, 'playground-error.png') });
    });
  }
  await test('the error disappears once a good graph is loaded', async () => {
    await page.selectOption('#example-select', 'mlp_2.post.json');
    await page.locator('[data-testid="error"]').waitFor({ state: 'detached' });
    await peakText(page);
    assert.strictEqual(await page.locator('[data-testid="error"]').count(), 0);
  });

  // 7. The widget.
  await test('the widget renders its summary and curve on docs.html', async () => {
    const docs = await context.newPage();
    await docs.goto(`${url}docs.html`);
    const expected = {
      '#widget-default': cliPlan(args.cli, path.join(site, 'examples', 'gpt2_2.post.json')).plan.final.peak_bytes,
      '#widget-passes': (() => {
        const out = path.join(tmp, 'w.json');
        spawnSync(args.cli, ['plan', path.join(site, 'examples', 'mlp_2.pre.json'), '--memory-methods', 'baseline,bfs', '-o', out]);
        return JSON.parse(fs.readFileSync(out, 'utf8')).final.peak_bytes;
      })(),
    };
    for (const [sel, peak] of Object.entries(expected)) {
      const shown = docs.locator(`${sel} [data-testid="peak-bytes"]`);
      await shown.waitFor({ timeout: 20000 });
      assert.strictEqual(await shown.textContent(), String(peak), `${sel}`);
      assert(await docs.locator(`${sel} .memory-chart path.line`).count() === 2, `${sel}: no curve`);
    }
    await docs.screenshot({ path: path.join(shots, 'widget-docs.png'), fullPage: true });
    await docs.close();
  });

  // 8. Bench: a 10k-node graph uploaded and planned in the page.
  if (args.benchNodes > 0) {
    await test(`bench: ${args.benchNodes}-node graph planned in the page`, async () => {
      const file = path.join(tmp, `layered_${args.benchNodes}.json`);
      const gen = spawnSync(args.cli, ['gen', 'layered', '--nodes', String(args.benchNodes), '-o', file], { encoding: 'utf8' });
      assert.strictEqual(gen.status, 0, `schedlab gen layered failed: ${gen.stderr}`);
      const expected = cliPlan(args.cli, file).plan.final.peak_bytes;
      await page.goto(`${url}?example=none`);
      await page.locator('#memory-methods input').first().waitFor();
      for (let i = 0; i < 3; i++) {
        await page.evaluate(() => { document.getElementById('status').textContent = ''; });
        const t0 = Date.now();
        await page.setInputFiles('#file-input', file);
        await page.waitForFunction(() => /planned in/.test(document.getElementById('status').textContent), null, { timeout: 60000 });
        const ms = Date.now() - t0;
        assert.strictEqual(await peakText(page), String(expected));
        console.log(`bench:   run ${i + 1}: ${ms} ms from file pick to rendered report (${await page.locator('#status').textContent()})`);
        await page.setInputFiles('#file-input', []);
      }
      await page.screenshot({ path: path.join(shots, 'playground-10k.png'), fullPage: false });
    });
  }

  await finish();
}

run(main);
