// Shared set-up of the browser tests: one `tilescope viz --serve --port 0`
// and one headless Debian chromium per test file, pages that fail on any
// script error, and helpers that click and type the way a user does.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

export const TILESCOPE = process.env.TILESCOPE;
export const ARTIFACTS = process.env.ARTIFACTS || path.join(os.tmpdir(), 'tilescope-browser-artifacts');
assert.ok(TILESCOPE && fs.existsSync(TILESCOPE), 'set TILESCOPE to the tilescope binary');
fs.mkdirSync(ARTIFACTS, { recursive: true });

export const env = { server: null, base: '', context: null, browser: null };
let profile;

before(async () => {
  env.server = spawn(TILESCOPE, ['viz', '--serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  env.base = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('server did not start: ' + out)), 15000);
    env.server.stdout.on('data', (chunk) => {
      out += chunk;
      const m = out.match(/serving on (http:\/\/127\.0\.0\.1:\d+\/)/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    env.server.on('exit', (code) => reject(new Error('server exited with ' + code + ': ' + out)));
  });
  profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tilescope-chromium-'));
  env.context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1500, height: 950 },
    acceptDownloads: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  env.browser = env.context.browser();
});

after(async () => {
  if (env.context) await env.context.close();
  if (env.server) env.server.kill();
  if (profile) fs.rmSync(profile, { recursive: true, force: true });
});

// A fresh page; fails the test on any script error.
export async function openPage(url, context) {
  const page = await (context || env.context).newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.errors = errors;
  await page.goto(url);
  await settled(page);
  return page;
}
// Waits until the page shows the evaluation of its current state.
export async function settled(page, layout) {
  await page.waitForFunction((want) => {
    const v = window.tilescopeViz;
    return v && v.doc && !document.body.dataset.evaluating && (!want || v.doc.request.layout === want);
  }, layout, { timeout: 30000 });
}
export async function loadPreset(page, layoutText) {
  const value = await page.$eval('#preset-select', (sel, want) => {
    const opt = [...sel.options].find((o) => o.textContent.startsWith(want + ' '));
    return opt ? opt.value : null;
  }, layoutText);
  assert.ok(value !== null, 'preset ' + layoutText + ' is in the menu');
  await page.selectOption('#preset-select', value);
  await settled(page, layoutText);
}
export async function setLayout(page, text, shape) {
  if (shape !== undefined) await page.fill('#shape-input', shape);
  await page.fill('#layout-input', text);
  await settled(page, text);
}
// Clicks the centre of a cell of a view ('logical' or 'physical').
export async function clickCell(page, view, cell) {
  const [x, y] = await page.evaluate(([v, c]) => window.tilescopeViz.cellCenter(v, c), [view, cell]);
  await page.mouse.click(x, y);
}
export const lit = (page, view) => page.evaluate((v) => window.tilescopeViz.marks(v, 'lit'), view);
export const marks = (page, view, kind) => page.evaluate(([v, k]) => window.tilescopeViz.marks(v, k), [view, kind]);
export const hashOf = (values) => '#' + new URLSearchParams(values).toString().replace(/\+/g, '%20');
