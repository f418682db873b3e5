// tilescope layoutviz: the learning panels — the copy view (a warp's data
// movement between a register fragment and a shared tile), layout algebra
// before/after, and docs/layouts.md's exercises, answered on the page and
// checked against the engine's own answer (every expected value is read
// from a document the server computed, never written here).
(function () {
  'use strict';

  const { GridView, esc } = window.TilescopePaint;
  const viz = window.tilescopeViz;
  const $ = (id) => document.getElementById(id);
  const data = JSON.parse(document.getElementById('tilescope-data').textContent);
  const live = data.mode === 'server';
  const api = (path, params) => fetch(path + '?' + new URLSearchParams(params).toString()).then((r) => r.json());
  const needServer = 'this needs the live engine: run `tilescope viz --serve` and open this view there';

  // ---------------------------------------------------------------- copy view
  const copy = { doc: null, request: 0, phase: 0, thread: 0 };
  const copyViews = {};
  const COPY_EXAMPLES = {
    'wgmma-swizzled': { from: 'wgmma_acc(64, 32)', to: 'swizzle(128B, f32, S[(64,32):(32,1)])', shape: '', dtype: 'f32', inst: 'tma' },
    'wgmma-rowmajor': { from: 'wgmma_acc(64, 32)', to: 'S[(64,32):(32,1)]', shape: '', dtype: 'f32', inst: 'tma' },
    'ldmatrix-plain': { from: 'S[(16,16):(16,1)]', to: 'mma_m16n8k16_a()', shape: '', dtype: 'bf16', inst: 'ldmatrix.x4' },
    'ldmatrix-swizzled': { from: 'swizzle(32B, bf16, S[(16,16):(16,1)])', to: 'mma_m16n8k16_a()', shape: '', dtype: 'bf16', inst: 'ldmatrix.x4' },
    'global-ldmatrix': { from: 'swizzle(32B, bf16, S[(16,16):(16,1)])', to: 'mma_m16n8k16_a()', shape: '', dtype: 'bf16', inst: 'ldmatrix.x4', global: 'S[(16,16):(4096,1)]' },
    'global-ldmatrix-pitch': { from: 'swizzle(32B, bf16, S[(16,16):(16,1)])', to: 'mma_m16n8k16_a()', shape: '', dtype: 'bf16', inst: 'ldmatrix.x4', global: 'S[(16,16):(4100,1)]' },
    'wgmma-tma-global': { from: 'wgmma_acc(64, 32)', to: 'swizzle(128B, f32, S[(64,32):(32,1)])', shape: '', dtype: 'f32', inst: 'tma', global: 'S[(64,32):(8192,1)]' },
  };
  // The copy view's fields and the URL keys that hold them (viz.js DEFAULTS).
  const COPY_KEYS = { from: 'cfrom', to: 'cto', shape: 'cshape', dtype: 'cdtype', inst: 'cinst', warp: 'cwarp', global: 'cglobal' };
  function copyParams() {
    return { from: $('copy-from').value, to: $('copy-to').value, shape: $('copy-shape').value, dtype: $('copy-dtype').value,
      inst: $('copy-inst').value, warp: $('copy-warp').value || '0', target: 'sm_90a', global: $('copy-global').value.trim() };
  }
  // The copy shown goes into the URL, so a link opens it (and a link without
  // it clears it).
  function saveCopyState() {
    const p = copyParams();
    for (const [field, key] of Object.entries(COPY_KEYS)) viz.state[key] = p[field];
    viz.state.ct = $('copy-thread').value || '0';
    viz.writeHash();
  }
  function runCopy() {
    if (!live) { $('copy-summary').textContent = needServer; return Promise.resolve(); }
    saveCopyState();
    document.body.dataset.copying = '1';
    return api('api/copy', copyParams()).then((d) => {
      copy.doc = d; copy.request = 0; copy.phase = 0;
      drawCopy();
      delete document.body.dataset.copying;
    });
  }
  // A link (or the page's first URL) sets the copy view: its fields from the
  // URL keys, defaults for the keys not given; no cfrom: no copy shown.
  function copyFromState() {
    const st = viz.state, want = {};
    for (const [field, key] of Object.entries(COPY_KEYS)) want[field] = st[key];
    const shown = copy.doc && copy.doc.request;
    if (!st.cfrom) {
      // The fields as the page first shows them (their HTML defaults).
      for (const field of ['from', 'to', 'shape', 'dtype', 'warp', 'global', 'thread']) $('copy-' + field).value = $('copy-' + field).defaultValue;
      $('copy-inst').value = ''; $('copy-example').value = '';
      copy.doc = null; $('copy-views').hidden = true; $('copy-summary').textContent = ''; $('copy-diagnostics').textContent = '';
      return;
    }
    $('copy-thread').value = st.ct;
    if (shown && Object.keys(COPY_KEYS).every((f) => String(shown[f] === undefined ? '' : shown[f]) === want[f])) { showPhase(); return; }
    for (const [field, value] of Object.entries(want)) $('copy-' + field).value = value;
    $('copy-example').value = '';
    runCopy();
  }
  function drawCopy() {
    const d = copy.doc, box = $('copy-summary');
    $('copy-diagnostics').innerHTML = (d.diagnostics || []).map((x) => '<div class="diag error" data-kind="' + esc(x.kind) + '"><span class="kind">' + esc(x.kind) + '</span>' +
      (x.column ? '&lt;' + esc(x.kind) + '&gt;:1:' + x.column + ': ' : '') + esc(x.message) + '</div>').join('');
    $('copy-views').hidden = !d.ok;
    if (!d.ok) { box.textContent = ''; return; }
    const dir = d.registersFrom ? 'registers → shared (a store)' : 'shared → registers (a load)';
    box.innerHTML = '<b data-wavefronts="' + d.wavefronts + '" id="copy-wavefronts">' + d.wavefronts + ' wavefront' + (d.wavefronts === 1 ? '' : 's') + '</b> for warp ' + d.warp +
      ' (ideal ' + d.ideal + '), ' + d.requests.length + ' request' + (d.requests.length === 1 ? '' : 's') + ' of ' + d.bytes + '-byte accesses · ' + esc(dir) +
      (d.instruction ? ' · checked against ' + esc(d.instruction) : '') +
      '<div id="copy-legality">' + (d.legal ? '<span class="legal">✓ legal for the instruction and conflict-free</span>' :
        d.legality.map((x) => '<div class="diag error" data-kind="' + esc(x.kind) + '"><span class="kind">' + esc(x.kind) + '</span>' + esc(x.message) + '</div>').join('')) + '</div>';
    const size = d.thread.length, bits = d.bits, perLine = Math.max(1, Math.floor(1024 / bits));
    const warpOf = (f) => Math.floor(d.thread[f] / 32);
    const classOf = (f) => (warpOf(f) === d.warp ? (d.thread[f] & 31) >> 2 : -1);
    // Registers: the warp's 32 threads x their registers.
    let maxReg = 0, maxLine = 0;
    for (let f = 0; f < size; ++f) { maxReg = Math.max(maxReg, d.register[f]); maxLine = Math.max(maxLine, Math.floor(d.slot[f] * bits / 1024)); }
    const regCols = maxReg + 1, regCells = new Int16Array(32 * regCols).fill(-1), regElem = new Int32Array(32 * regCols).fill(-1);
    const tileCells = new Int16Array((maxLine + 1) * perLine).fill(-1), tileElem = new Int32Array((maxLine + 1) * perLine).fill(-1);
    copy.regCell = new Int32Array(size).fill(-1); copy.tileCell = new Int32Array(size);
    for (let f = 0; f < size; ++f) {
      const bit = d.slot[f] * bits, cell = Math.floor(bit / 1024) * perLine + Math.floor((bit % 1024) / bits);
      tileCells[cell] = Math.max(classOf(f), warpOf(f) === d.warp ? 0 : -1);
      tileElem[cell] = f; copy.tileCell[f] = cell;
      if (warpOf(f) !== d.warp) continue;
      const rc = (d.thread[f] & 31) * regCols + d.register[f];
      regCells[rc] = classOf(f); regElem[rc] = f; copy.regCell[f] = rc;
    }
    const coord = (f) => { const idx = []; let rest = f; for (let k = d.shape.length - 1; k >= 0; --k) { idx[k] = rest % d.shape[k]; rest = Math.floor(rest / d.shape[k]); } return idx.join(','); };
    copy.coord = coord;
    copyViews.regs.setGrid({ rows: 32, cols: regCols, aspect: 0.6, classes: regCells, left: 40,
      label: (c) => (regElem[c] >= 0 ? coord(regElem[c]) : ''), rowTick: (i) => 'T' + (32 * d.warp + i), colTick: (j) => viz.registerName(j, d.registers),
      rowWeight: (i) => (i % 8 === 0 ? 1 : 0), ariaLabel: 'the warp\'s registers' });
    copyViews.tile.setGrid({ rows: maxLine + 1, cols: perLine, aspect: Math.min(2, Math.max(0.5, bits / 16)), classes: tileCells,
      label: (c) => (tileElem[c] >= 0 ? coord(tileElem[c]) : ''), rowTick: (i) => String(i),
      colTick: (j) => (j % Math.max(1, 32 / bits) ? '' : 'b' + Math.floor(j / Math.max(1, 32 / bits))),
      colWeight: (j) => (j % (4 * Math.max(1, 32 / bits)) === 0 ? 2 : j % Math.max(1, 32 / bits) === 0 ? 1 : 0), ariaLabel: 'the shared tile' });
    drawGlobal(d, coord);
    $('copy-request').innerHTML = d.requests.map((r, k) => '<option value="' + k + '">request ' + k + ' (' + r.wavefronts + ' wavefronts)</option>').join('');
    showPhase();
  }
  // Where the first element a thread moves lives at each stage.
  function globalPath(d, f) {
    if (!d.global || f === undefined) return '';
    const stages = ['global element ' + d.global.slot[f], 'shared element ' + d.slot[f], 'register ' + d.register[f] + ' of thread ' + d.thread[f]];
    if (d.registersFrom) stages.reverse();
    return ' · element (' + copy.coord(f) + '): ' + stages.join(' → ');
  }
  // The global side of a TMA load (or store) of the tile: the tile in its
  // logical shape, each element coloured by its 32-byte sector, its offset
  // in global elements as label; the sectors it touches and TMA's verdict.
  function drawGlobal(d, coord) {
    const g = d.global;
    $('copy-global-row').hidden = !g;
    if (!g) return;
    const cols = d.shape[d.shape.length - 1], rows = d.thread.length / cols, bytes = Math.max(1, d.bits / 8);
    // Colour k: the tile's k-th sector (mod 8), so neighbouring sectors differ.
    const sectorOf = (f) => Math.floor(g.slot[f] * bytes / 32);
    const order = new Map([...new Set(Array.from({ length: rows * cols }, (_, f) => sectorOf(f)))].sort((a, b) => a - b).map((x, k) => [x, k]));
    const classes = new Int16Array(rows * cols);
    for (let f = 0; f < rows * cols; ++f) classes[f] = order.get(sectorOf(f)) % 8;
    copyViews.global.setGrid({ rows, cols, aspect: 1, classes, left: 40,
      label: (f) => String(g.slot[f]), rowTick: (i) => String(i), colTick: (j) => String(j),
      rowWeight: (i) => (i % 8 === 0 ? 1 : 0), colWeight: (j) => (j % 8 === 0 ? 1 : 0), ariaLabel: 'the tile in global memory' });
    $('copy-global-caption').textContent = (d.registersFrom ? 'stored by TMA to ' : 'loaded by TMA from ') + g.layout + ' · strides ' + g.strides.join(', ') +
      ' elements · ' + g.sectors + ' sectors of 32 B for ' + g.bytes + ' bytes (ideal ' + g.idealSectors + ')';
    const verdict = g.legal ? '<span class="legal" id="copy-global-legal">✓ TMA can move this box (global strides, box, swizzle)</span>' :
      g.legality.map((x) => '<div class="diag error" data-kind="' + esc(x.kind) + '"><span class="kind">' + esc(x.kind) + '</span>' + esc(x.message) + '</div>').join('');
    $('copy-summary').insertAdjacentHTML('beforeend', '<div id="copy-global-legality">global ' + (d.registersFrom ? '← shared (TMA store)' : '→ shared (TMA load)') +
      ': ' + g.sectors + ' sector' + (g.sectors === 1 ? '' : 's') + (g.sectors > g.idealSectors ? ' where ' + g.idealSectors + ' would do' : '') + ' · ' + verdict + '</div>');
    copy.coord = coord;
  }
  // The current request and phase: who accesses what, the banks it hits.
  function showPhase() {
    const d = copy.doc;
    if (!d || !d.ok || !d.requests.length) return;
    copy.request = Math.min(copy.request, d.requests.length - 1);
    const req = d.requests[copy.request];
    copy.phase = Math.min(copy.phase, req.phases.length - 1);
    const phase = req.phases[copy.phase];
    $('copy-request').value = String(copy.request);
    $('copy-phase').innerHTML = req.phases.map((p, k) => '<option value="' + k + '">phase ' + k + ' (threads ' + p.threads[0] + '–' + p.threads[p.threads.length - 1] + ')</option>').join('');
    $('copy-phase').value = String(copy.phase);
    const conflict = new Set(phase.words.map((w, b) => (w > 1 ? b : -1)).filter((b) => b >= 0));
    const regMarks = new Map(), tileMarks = new Map();
    const t = +$('copy-thread').value || 0;
    // The chosen thread: everything it moves, over all requests.
    for (const f of d.moved[t % 32] || []) { if (copy.regCell[f] >= 0) regMarks.set(copy.regCell[f], 'lit'); tileMarks.set(copy.tileCell[f], 'lit'); }
    for (let f = 0; f < d.thread.length; ++f) if (d.thread[f] === 32 * d.warp + (t % 32) && copy.regCell[f] >= 0) regMarks.set(copy.regCell[f], 'lit');
    phase.accesses.forEach((list) => list.forEach((f) => {
      const kind = conflict.has(d.bank[f]) ? 'conflict' : 'access';
      tileMarks.set(copy.tileCell[f], kind);
      if (copy.regCell[f] >= 0) regMarks.set(copy.regCell[f], kind);
    }));
    copyViews.regs.setMarks(regMarks, true);
    copyViews.tile.setMarks(tileMarks, true);
    if (d.global) {
      // The same elements in global memory (cell = logical element).
      const globalMarks = new Map();
      for (const f of d.moved[t % 32] || []) globalMarks.set(f, 'lit');
      phase.accesses.forEach((list) => list.forEach((f) => globalMarks.set(f, 'access')));
      copyViews.global.setMarks(globalMarks, true);
    }
    const worst = Math.max(0, ...phase.words);
    const text = 'request ' + copy.request + ', phase ' + copy.phase + ': threads ' + phase.threads[0] + '–' + phase.threads[phase.threads.length - 1] + ', ' +
      phase.wavefronts + ' wavefront' + (phase.wavefronts === 1 ? '' : 's') + (worst > 1 ? ' · ' + worst + '-way conflict on bank' + (conflict.size > 1 ? 's ' : ' ') + [...conflict].join(', ') : ' · conflict-free');
    $('copy-phase-detail').textContent = text;
    const mine = (d.moved[t % 32] || []).map(copy.coord);
    $('copy-thread-detail').textContent = 'thread ' + (32 * d.warp + t % 32) + ' moves ' + mine.length + ' element' + (mine.length === 1 ? '' : 's') + ': ' + mine.slice(0, 24).map((c) => '(' + c + ')').join(' ') + (mine.length > 24 ? ' …' : '') +
      globalPath(d, (d.moved[t % 32] || [])[0]);
    $('announce').textContent = text;
    const svg = $('copy-chart'), bw = 14, hmax = 40, top = 10, max = Math.max(1, worst), parts = [];
    phase.words.forEach((c, b) => {
      const h = c ? Math.max(3, Math.round(hmax * c / max)) : 0, x = 2 + b * bw;
      parts.push('<rect class="bar' + (c > 1 ? ' conflict' : '') + '" x="' + x + '" y="' + (top + hmax - h) + '" width="' + (bw - 2) + '" height="' + h + '"><title>bank ' + b + ': ' + c + '</title></rect>' +
        '<text class="axis" x="' + (x + (bw - 2) / 2) + '" y="' + (top + hmax + 10) + '" text-anchor="middle">' + b + '</text>');
    });
    svg.setAttribute('viewBox', '0 0 ' + (4 + 32 * bw) + ' ' + (top + hmax + 14));
    svg.setAttribute('width', 4 + 32 * bw);
    svg.innerHTML = parts.join('');
  }
  function stepPhase(delta) {
    const d = copy.doc;
    if (!d || !d.ok) return;
    let r = copy.request, p = copy.phase + delta;
    if (p >= d.requests[r].phases.length) { p = 0; r = (r + 1) % d.requests.length; }
    if (p < 0) { r = (r - 1 + d.requests.length) % d.requests.length; p = d.requests[r].phases.length - 1; }
    copy.request = r; copy.phase = p;
    showPhase();
  }

  // ---------------------------------------------------------------- algebra
  const algebraViews = {};
  function ownerShort(o) {
    const keys = Object.keys(o);
    if (keys.length === 1 && keys[0] === 'm') return String(o.m);
    return keys.map((k) => ({ laneid: 'l', warpid: 'w', wid_in_wg: 'w', m: 'm', TLane: 'L', TCol: 'c' }[k] || k) + o[k]).join(' ');
  }
  function algebraGrid(owners, shape) {
    const cols = shape.length > 1 ? shape[shape.length - 1] : Math.min(owners.length, 32);
    const rows = Math.ceil(owners.length / cols), classes = new Int16Array(rows * cols).fill(-1);
    owners.forEach((o, i) => { const v = Object.values(o); classes[i] = (v.length ? v[v.length - 1] : 0) % 8; });
    return { rows, cols, aspect: 0.7, classes, label: (c) => (owners[c] ? ownerShort(owners[c]) : ''), rowTick: (i) => String(i), colTick: (j) => String(j), ariaLabel: 'layout values' };
  }
  function runAlgebra() {
    if (!live) { $('algebra-result').textContent = needServer; return Promise.resolve(); }
    const params = { layout: viz.state.layout, op: $('algebra-op').value, operand: $('algebra-operand').value };
    document.body.dataset.algebra = '1';
    return api('api/algebra', params).then((d) => {
      delete document.body.dataset.algebra;
      const box = $('algebra-result');
      $('algebra-views').hidden = !d.ok;
      if (!d.ok) { box.innerHTML = '<div class="diag error" data-kind="' + esc(d.diagnostics[0].kind) + '"><span class="kind">' + esc(d.diagnostics[0].kind) + '</span>' + esc(d.diagnostics[0].message) + '</div>'; return; }
      box.innerHTML = 'before: <code>' + esc(d.before) + '</code><br>after: <code id="algebra-after">' + esc(d.result) + '</code> over shape ' + d.shape.join(' × ') +
        ' <button type="button" id="algebra-open" class="step">view the result</button>';
      $('algebra-open').addEventListener('click', () => viz.setView({ layout: d.result, shape: d.shape.join(','), dtype: viz.state.dtype, target: viz.state.target, threads: viz.state.threads }));
      const shape = (viz.doc && viz.doc.ok && viz.doc.shape) || [d.beforeOwners.length];
      algebraViews.before.setGrid(algebraGrid(d.beforeOwners, shape));
      algebraViews.after.setGrid(algebraGrid(d.afterOwners, d.shape));
    });
  }

  // ---------------------------------------------------------------- exercises
  // Each expected answer is computed from the engine's document for the
  // exercise's view (`/api/eval`, `/api/copy`), never written down here.
  const evalView = (view) => api('api/eval', Object.assign({}, viz.DEFAULTS, view));
  const ownersAt = (d, flat) => { const s = d.ownerStride; return d.owners.slice(flat * s, flat * s + d.axes.length); };
  const threadOf = (d, flat) => ownersAt(d, flat).reduce((t, v, k) => t + v * d.threadWeights[k], 0);
  const flatOf = (shape, idx) => idx.reduce((f, v, k) => f * shape[k] + v, 0);
  // "T81", "warpid 2, laneid 17", "laneid 5 m 2": the owner an answer names.
  function ownerAnswer(d, flat, text) {
    const want = ownersAt(d, flat), t = threadOf(d, flat), got = {};
    for (const m of text.matchAll(/([A-Za-z_]+)\s*[:= ]?\s*(\d+)/g)) got[m[1]] = +m[2];
    if ('T' in got && got.T !== t) return false;
    let named = 'T' in got ? 1 : 0;
    for (const [axis, v] of Object.entries(got)) {
      if (axis === 'T') continue;
      const k = d.axes.indexOf(axis);
      if (k < 0 || want[k] !== v) return false;
      ++named;
    }
    return named > 0 && ('T' in got || d.axes.filter((a) => d.threadWeights[d.axes.indexOf(a)] > 0).every((a) => a in got));
  }
  const number = (text) => (/^\s*\d+\s*$/.test(text) ? +text : NaN);
  const EXERCISES = [
    { id: '1.1', view: { layout: 'S[(4,32):(1@warpid,1@laneid)]', shape: '4,32', dtype: 'f32', sel: 'e:81' }, question: 'Which thread holds element (2, 17)? (e.g. "T5" or "warpid 0, laneid 5")',
      check: async (a, v) => { const d = await evalView(v); return ownerAnswer(d, flatOf(d.shape, [2, 17]), a); } },
    { id: '1.2', view: { layout: 'S[(4,8):(8,1)]', shape: '4,8', dtype: 'f32', scope: 'shared' }, question: 'At which m is element (1, 2) of this row-major tile?',
      check: async (a, v) => { const d = await evalView(v); return number(a) === ownersAt(d, flatOf(d.shape, [1, 2]))[d.axes.indexOf('m')]; } },
    { id: '2.1', view: { layout: 'mma_m16n8k16_c()', shape: '', target: 'sm_80', threads: '32' }, question: 'Which lane and register hold C[9][2]? (e.g. "laneid 3, m 1")',
      check: async (a, v) => { const d = await evalView(v); return ownerAnswer(d, flatOf(d.shape, [9, 2]), a) && /m\s*\d/.test(a); } },
    { id: '2.2', view: { layout: 'wgmma_acc(64, 128)', shape: '' }, question: 'How many f32 registers does each of the 128 threads hold?',
      check: async (a, v) => { const d = await evalView(v); let n = 0; for (let f = 0; f < d.size; ++f) n += threadOf(d, f) === 0; return number(a) === n; } },
    { id: '3.1', view: { layout: 'S[8:1@m] + R[32:1@laneid]', shape: '8', threads: '32', sel: 'e:3' }, question: 'How many owners does element 3 have?',
      check: async (a, v) => { const d = await evalView(v); return number(a) === d.replicas; } },
    { id: '4.1', view: { layout: 'S[(4,8):(1@warpid,0@laneid)]', shape: '4,8' }, question: 'Fix the layout so that it is legal without changing the 4×8 shape: type a layout.',
      check: async (a, v) => { const d = await evalView(Object.assign({}, v, { layout: a })); return d.ok && !(d.diagnostics || []).some((x) => x.severity === 'error'); } },
    { id: '4.2', view: { layout: 'S[(2,64):(1@warpid,1@laneid)]', shape: '2,64' }, question: 'Give a legal layout of the same 2×64 tile that spreads it over 4 warps.',
      check: async (a, v) => { const d = await evalView(Object.assign({}, v, { layout: a })); if (!d.ok || (d.diagnostics || []).some((x) => x.severity === 'error')) return false; const w = d.axes.indexOf('warpid'); if (w < 0) return false; const s = new Set(); for (let f = 0; f < d.size; ++f) s.add(ownersAt(d, f)[w]); return s.size === 4; } },
    { id: '5.1', view: { layout: 'S[(32,64):(64,1)]', shape: '32,64', dtype: 'bf16' }, question: 'Thread t reads element (t, 0): how many wavefronts?',
      check: async (a, v) => number(a) === (await evalView(v)).bankAccess.wavefronts },
    { id: '5.2', view: { layout: 'swizzle(128B, bf16, S[(32,64):(64,1)])', shape: '32,64', dtype: 'bf16' }, question: 'The same column read of the 128B-swizzled tile: how many wavefronts?',
      check: async (a, v) => number(a) === (await evalView(v)).bankAccess.wavefronts },
    { id: '5.3', view: { layout: 'S[(32,64):(66,1)]', shape: '32,64', dtype: 'bf16', alloc: '2112' }, question: 'Rows padded by two bf16: how many wavefronts for the column read?',
      check: async (a, v) => number(a) === (await evalView(v)).bankAccess.wavefronts },
    { id: '5.4', view: { layout: 'S[(32,64):(64,1)]', shape: '32,64', dtype: 'bf16', av: '8' }, question: 'Each thread reads 8 consecutive bf16 (16 bytes) of its row: how many wavefronts?',
      check: async (a, v) => number(a) === (await evalView(v)).bankAccess.wavefronts },
    { id: '5.5', view: { layout: 'S[(32,64):(64,1)]', shape: '32,64', dtype: 'bf16', av: '8' }, question: 'New: pad the rows so that these 16-byte column reads are aligned and take the ideal 4 wavefronts. Type the layout (S[(32,64):(P,1)]).',
      check: async (a, v) => { const d = await evalView(Object.assign({}, v, { layout: a, alloc: '0' })); const b = d.bankAccess; return !!b && b.wavefronts === b.ideal; } },
    { id: '6.1', view: { layout: 'tmem_m64(64)', shape: '', target: 'sm_100a' }, question: 'How many of the 128 TMEM lanes does the M=64 accumulator use?',
      check: async (a, v) => { const d = await evalView(v); const k = d.axes.indexOf('TLane'), s = new Set(); for (let f = 0; f < d.size; ++f) s.add(ownersAt(d, f)[k]); return number(a) === s.size; } },
    { id: '6.2', view: { layout: 'tcgen05_32x32b(16)', shape: '', target: 'sm_100a', sel: 'o:wid_in_wg 2' }, question: 'Which TMEM lanes (logical rows) can warp 2 of the warpgroup load? Give the range, e.g. "0-31".',
      check: async (a, v) => {
        const d = await evalView(v), w = d.axes.indexOf('wid_in_wg'), cols = d.shape[d.shape.length - 1], rows = [];
        for (let f = 0; f < d.size; ++f) if (ownersAt(d, f)[w] === 2) rows.push(Math.floor(f / cols));
        const m = a.match(/^\s*(\d+)\s*(?:-|–|…|\.\.|to)\s*(\d+)\s*$/);
        const want = new Set(rows);
        return !!m && w >= 0 && want.size === +m[2] - +m[1] + 1 && [...want].every((r) => r >= +m[1] && r <= +m[2]);
      } },
    { id: '7.1', view: { layout: 'S[(4,16):(1@pid,1@m)]', shape: '4,16', devices: '4' }, question: 'Set Devices to 2: what kind of finding does the verifier report (one word, as the diagnostic names it)?',
      check: async (a, v) => {
        const d = await evalView(Object.assign({}, v, { devices: '2' }));
        const kinds = (d.diagnostics || []).filter((x) => x.severity === 'error').map((x) => x.kind);
        return kinds.length > 0 && kinds.includes(a.trim().toLowerCase());
      } },
    { id: '8.1', copy: 'wgmma-rowmajor', question: 'New, data movement: warp 0 stores the wgmma accumulator into the row-major f32 tile with 8-byte stores. How many wavefronts? (Then try the 128B-swizzled tile.)',
      check: async (a) => number(a) === (await api('api/copy', COPY_EXAMPLES['wgmma-rowmajor'])).wavefronts },
    { id: '8.2', copy: 'ldmatrix-plain', question: 'New, data movement: give a shared layout of the 16×16 bf16 tile that ldmatrix.x4 reads without bank conflicts (and that the instruction accepts).',
      check: async (a) => { const d = await api('api/copy', Object.assign({}, COPY_EXAMPLES['ldmatrix-plain'], { from: a, shape: '16,16' })); return d.ok && d.legal; } },
    { id: '9.1', view: { layout: 'S[(4,32):(1@warpid,1@laneid)]', shape: '4,32' }, question: 'Layout algebra: type the layout S[(4,32):(1@warpid,1@laneid)] ∘ S[(32,4):(1,32)] (any spelling with the same owners).',
      check: async (a, v) => {
        const r = await api('api/algebra', { layout: v.layout, op: 'compose', operand: 'S[(32,4):(1,32)]' });
        const [want, got] = await Promise.all([r.result, a].map((l) => evalView({ layout: l, shape: '128', threads: '128' })));
        return r.ok && got.ok && want.ok && got.axes.join() === want.axes.join() && got.owners.join() === want.owners.join();
      } },
  ];
  function showExercise() {
    const e = EXERCISES[+$('exercise-select').value];
    $('exercise-question').textContent = e.question;
    $('exercise-answer').value = '';
    $('exercise-feedback').textContent = '';
    $('exercise-feedback').className = 'feedback';
  }
  function openExercise() {
    const e = EXERCISES[+$('exercise-select').value];
    if (e.copy) { loadCopyExample(e.copy); $('copy-panel').scrollIntoView(); return; }
    viz.setView(e.view);
  }
  async function checkExercise() {
    const e = EXERCISES[+$('exercise-select').value], fb = $('exercise-feedback');
    if (!live) { fb.textContent = needServer; return; }
    const answer = $('exercise-answer').value.trim();
    if (!answer) { fb.textContent = 'type an answer first'; return; }
    document.body.dataset.checking = '1';
    let ok = false;
    try { ok = await e.check(answer, e.view); } catch (err) { ok = false; }
    delete document.body.dataset.checking;
    fb.textContent = ok ? '✓ right — the engine agrees' : '✗ not what the engine says; open the view and look again';
    fb.className = 'feedback ' + (ok ? 'good' : 'bad');
    fb.dataset.result = ok ? 'right' : 'wrong';
    $('announce').textContent = fb.textContent;
  }
  function loadCopyExample(name) {
    const ex = COPY_EXAMPLES[name];
    for (const k of ['from', 'to', 'shape', 'dtype', 'inst']) $('copy-' + k).value = ex[k];
    $('copy-global').value = ex.global || '';
    $('copy-warp').value = '0';
    return runCopy();
  }

  // ---------------------------------------------------------------- wiring
  function wire() {
    copyViews.regs = new GridView($('copy-regs'), { onPick: (cell) => { $('copy-thread').value = String(Math.floor(cell / copyViews.regs.grid.cols)); viz.state.ct = $('copy-thread').value; viz.writeHash(); showPhase(); } });
    copyViews.tile = new GridView($('copy-tile'), {});
    copyViews.global = new GridView($('copy-global-view'), {});
    algebraViews.before = new GridView($('algebra-before'), {});
    algebraViews.after = new GridView($('algebra-after-view'), {});
    $('copy-run').addEventListener('click', runCopy);
    $('copy-example').addEventListener('change', (e) => { if (e.target.value) loadCopyExample(e.target.value); });
    $('copy-request').addEventListener('change', (e) => { copy.request = +e.target.value; copy.phase = 0; showPhase(); });
    $('copy-phase').addEventListener('change', (e) => { copy.phase = +e.target.value; showPhase(); });
    $('copy-next').addEventListener('click', () => stepPhase(1));
    $('copy-prev').addEventListener('click', () => stepPhase(-1));
    $('copy-thread').addEventListener('input', () => { if (copy.doc) { viz.state.ct = $('copy-thread').value || '0'; viz.writeHash(); } showPhase(); });
    document.addEventListener('tilescope:state', copyFromState);
    $('algebra-run').addEventListener('click', runAlgebra);
    $('exercise-select').innerHTML = EXERCISES.map((e, i) => '<option value="' + i + '">' + e.id + ' — ' + esc(e.question.slice(0, 60)) + (e.question.length > 60 ? '…' : '') + '</option>').join('');
    $('exercise-select').addEventListener('change', showExercise);
    $('exercise-open').addEventListener('click', openExercise);
    $('exercise-check').addEventListener('click', checkExercise);
    $('exercise-answer').addEventListener('keydown', (e) => { if (e.key === 'Enter') checkExercise(); });
    showExercise();
  }
  wire();
  if (viz.state.cfrom) copyFromState();
  viz.copy = copy;
  viz.copyViews = copyViews;
  viz.exercises = EXERCISES;
})();
