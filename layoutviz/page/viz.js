// tilescope layoutviz: draws and indexes an evaluation document produced by
// the C++ layout engine (layoutviz/Evaluation.cpp). It never evaluates a
// layout itself — owners, banks, wavefronts, legality all come from the
// engine: in server mode every edit is sent to /api/eval, in a static page
// the one embedded evaluation is all there is.
(function () {
  'use strict';

  const { GridView, PALETTE, swatch, esc, SVG_DEFS } = window.TilescopePaint;
  const data = JSON.parse(document.getElementById('tilescope-data').textContent);
  const $ = (id) => document.getElementById(id);
  const live = data.mode === 'server';
  // Every key of the view, with the value a link that does not name it means.
  // The copy view's keys (cfrom ... ct) are learn.js's: an empty cfrom means
  // no copy shown.
  const DEFAULTS = { layout: '', shape: '', dtype: '', target: 'sm_90a', threads: '128', devices: '1',
    alloc: '0', scope: 'auto', sel: '', color: '', acc: 'column', ai: '0', av: '1', ac: '', ph: '',
    cfrom: '', cto: '', cshape: '', cdtype: 'f32', cinst: '', cwarp: '0', cglobal: '', ct: '0' };
  const STATE_KEYS = Object.keys(DEFAULTS);
  const EVAL_KEYS = ['layout', 'shape', 'dtype', 'target', 'threads', 'devices', 'alloc', 'scope', 'acc', 'ai', 'av', 'ac'];
  const state = Object.assign({}, DEFAULTS);
  let doc = null;    // the evaluation shown
  let model = null;  // indices derived from it
  let seq = 0;       // latest evaluation request
  const views = {};  // logical, physical: GridView

  // ---------------------------------------------------------------- URL state
  // A link sets the whole view: keys it does not name take their defaults.
  function stateFromHash() {
    const params = new URLSearchParams(location.hash.replace(/^#/, ''));
    const s = Object.assign({}, DEFAULTS);
    for (const k of STATE_KEYS) if (params.has(k)) s[k] = params.get(k);
    return s;
  }
  function writeHash() {
    const params = new URLSearchParams();
    for (const k of STATE_KEYS) if (state[k] !== DEFAULTS[k] || k === 'layout' || k === 'shape') params.set(k, state[k]);
    const hash = '#' + params.toString().replace(/\+/g, '%20');
    if (location.hash !== hash) history.replaceState(null, '', hash);
  }
  function shareUrl() {
    if (live) return location.href;
    return 'http://127.0.0.1:' + (data.defaultPort || 8765) + '/' + location.hash;
  }

  // ---------------------------------------------------------------- model
  function unflatten(shape, flat) {
    const idx = new Array(shape.length).fill(0);
    for (let i = shape.length - 1; i >= 0; --i) { idx[i] = flat % shape[i]; flat = Math.floor(flat / shape[i]); }
    return idx;
  }
  const coordText = (flat) => '(' + unflatten(doc.shape, flat).join(', ') + ')';
  function ownerValues(f, r) { const A = model.A, at = (f * model.R + r) * A; return Array.from(model.own.subarray(at, at + A)); }
  const ownerText = (values) => doc.axes.map((a, k) => a + ' ' + values[k]).join(', ');
  // PTX's name of register slot m: d7, a3, d1.lo (ldmatrix halves), r5.
  function registerName(m, naming) {
    const reg = naming || doc.registers || { prefix: 'r', parts: 1 };
    if (reg.parts <= 1) return reg.prefix + m;
    const part = m % reg.parts, q = Math.floor(m / reg.parts);
    return reg.prefix + q + '.' + (reg.parts === 2 ? ['lo', 'hi'][part] : 'b' + part);
  }
  // The true owner of owner o (= f * R + r): thread id and register, TMEM
  // lane and column, device, or shared-memory bank.
  function ownerLabel(o, short) {
    const v = model.own.subarray(o * model.A, o * model.A + model.A), ax = model.ax;
    const parts = [];
    if (ax.pid >= 0) parts.push('D' + v[ax.pid]);
    if (model.hasThreads) parts.push('T' + model.tid[o]);
    if (ax.TLane >= 0) parts.push('L' + v[ax.TLane]);
    if (ax.TCol >= 0) parts.push('c' + v[ax.TCol]);
    if (ax.m >= 0) {
      // Shared memory: the bank the engine placed it in; global memory has
      // no banks (doc.banks is absent), so its element offset.
      if (doc.view === 'shared' && doc.banks) parts.push('b' + doc.banks[2 * Math.floor(o / model.R) + 1]);
      else if (model.hasThreads) parts.push(registerName(v[ax.m]));
      else parts.push('m' + v[ax.m]);
    }
    if (!parts.length) parts.push(doc.axes.map((a, k) => a[0] + v[k]).join(' '));
    return parts.join(short ? '\n' : ' ');
  }

  function buildModel() {
    const A = doc.axes.length, R = doc.replicas, size = doc.size;
    const shape = doc.shape, lcols = shape[shape.length - 1], lrows = size / lcols;
    const own = doc.owners instanceof Int32Array ? doc.owners : Int32Array.from(doc.owners);
    const ax = {};
    for (const name of ['laneid', 'warpid', 'wid_in_wg', 'tid_in_wg', 'wgid', 'tx', 'm', 'TLane', 'TCol', 'pid']) ax[name] = doc.axes.indexOf(name);
    const weights = doc.threadWeights || doc.axes.map(() => 0);
    const hasThreads = weights.some((w) => w > 0);
    const n = size * R, tid = new Int32Array(n);
    let maxTid = 0;
    if (hasThreads)
      for (let o = 0; o < n; ++o) {
        let t = 0;
        for (let k = 0; k < A; ++k) t += own[o * A + k] * weights[k];
        tid[o] = t; if (t > maxTid) maxTid = t;
      }
    const m = { A, R, own, ax, tid, hasThreads, maxTid, lrows, lcols, view: doc.view };
    // Physical placement: a grid cell per owner.
    const place = new Int32Array(n);
    if (doc.view === 'shared') {
      const bits = doc.bits, perLine = Math.max(1, Math.floor(1024 / bits));
      let lines = 1;
      for (let o = 0; o < n; ++o) {
        const bit = own[o * A + ax.m] * bits, line = Math.floor(bit / 1024);
        place[o] = line * perLine + Math.floor((bit % 1024) / bits);
        if (line + 1 > lines) lines = line + 1;
      }
      m.prow = lines; m.pcol = perLine;
      if (lines * perLine > 1 << 22) return null;
    } else {
      const rowAx = doc.rowAxes.map((a) => doc.axes.indexOf(a)), colAx = doc.colAxes.map((a) => doc.axes.indexOf(a));
      const maxv = new Int32Array(A);
      for (let o = 0; o < n; ++o) for (let k = 0; k < A; ++k) if (own[o * A + k] > maxv[k]) maxv[k] = own[o * A + k];
      // A physical row (column) is a combination of values of its axes,
      // numbered by a mixed-radix key; keys are decoded into tuples only
      // when a tick or a label asks (2^18 columns would be 2^18 arrays).
      const keyer = (axes, limit) => {
        const radix = axes.map((a) => maxv[a] + 1), K = axes.length;
        let full = 1;
        for (const r of radix) full *= r;
        const keyOf = (o) => { let key = 0; for (let k = 0; k < K; ++k) key = key * radix[k] + own[o * A + axes[k]]; return key; };
        const tuple = (key) => { const t = new Array(K); for (let k = K - 1; k >= 0; --k) { t[k] = key % radix[k]; key = Math.floor(key / radix[k]); } return t; };
        if (full <= limit) return { count: full, index: keyOf, key: tuple };
        // Too many combinations to show gaps: only those present, in order.
        if (full <= 1 << 24) {
          const pos = new Int32Array(full).fill(-1);
          for (let o = 0; o < n; ++o) pos[keyOf(o)] = 0;
          const present = new Int32Array(n);
          let count = 0;
          for (let k = 0; k < full; ++k) if (pos[k] === 0) { pos[k] = count; present[count++] = k; }
          return { count, index: (o) => pos[keyOf(o)], key: (i) => (i < count ? tuple(present[i]) : undefined) };
        }
        const seen = new Set();
        for (let o = 0; o < n; ++o) seen.add(keyOf(o));
        const sorted = [...seen].sort((x, y) => x - y), pos = new Map(sorted.map((k, i) => [k, i]));
        return { count: sorted.length, index: (o) => pos.get(keyOf(o)), key: (i) => (i < sorted.length ? tuple(sorted[i]) : undefined) };
      };
      const rows = keyer(rowAx, 4096), cols = keyer(colAx, 4096);
      const cc = Math.max(cols.count, 1);
      for (let o = 0; o < n; ++o) place[o] = rows.index(o) * cc + cols.index(o);
      m.prow = rows.count; m.pcol = cc;
      m.rowAx = rowAx; m.colAx = colAx; m.rowKey = rows.key; m.colKey = cols.key;
    }
    // Who sits in each physical cell (owners, compressed rows).
    const cells = m.prow * m.pcol, start = new Int32Array(cells + 1);
    for (let o = 0; o < n; ++o) start[place[o] + 1]++;
    for (let c = 0; c < cells; ++c) start[c + 1] += start[c];
    const fill = start.slice(0, cells), list = new Int32Array(n);
    for (let o = 0; o < n; ++o) list[fill[place[o]]++] = o;
    m.place = place; m.cellStart = start; m.cellList = list;
    return m;
  }
  const cellOwners = (cell) => model.cellList.subarray(model.cellStart[cell], model.cellStart[cell + 1]);

  // ---------------------------------------------------------------- colour
  // Eight classes (PALETTE), each with its own pattern; what a class means
  // depends on the mode, and the legend says it.
  function colourMode() {
    return state.color || (doc.view === 'shared' ? 'chunk' : doc.replicas > 1 ? 'element' : 'owner');
  }
  function classer() {
    const mode = colourMode(), lc = model.lcols;
    if (mode === 'row') return { of: (f) => Math.floor(f / lc) % 8, legend: (k) => 'logical rows ≡ ' + k + ' (mod 8)' };
    if (mode === 'column') return { of: (f) => (f % lc) % 8, legend: (k) => 'logical columns ≡ ' + k + ' (mod 8)' };
    if (mode === 'chunk') return { of: (f) => Math.floor((f % lc) * doc.bits / 128) % 8, legend: (k) => '16-byte chunk ' + k + ' of the row (mod 8)' };
    if (mode === 'element') return { of: (f) => f % 8, legend: (k) => 'elements ≡ ' + k + ' (mod 8)' };
    // owner: warps when the owners span several, PTX's groupID (lane / 4)
    // within one warp; TMEM lanes by sub-partition; devices; memory lines.
    const R = model.R, tid = model.tid, own = model.own, stride = R * model.A, bits = doc.bits;
    if (model.hasThreads) {
      if (model.maxTid >= 32) return { of: (f) => (tid[f * R] >> 5) % 8, legend: (k) => 'warp ' + k + (model.maxTid >= 256 ? ' (mod 8)' : '') + ': threads ' + 32 * k + '–' + (32 * k + 31) };
      return { of: (f) => (tid[f * R] & 31) >> 2, legend: (k) => 'groupID ' + k + ': lanes ' + 4 * k + '–' + (4 * k + 3) };
    }
    const { TLane, pid, m } = model.ax;
    if (TLane >= 0) return { of: (f) => (own[f * stride + TLane] >> 5) % 8, legend: (k) => 'TMEM lanes ' + 32 * k + '–' + (32 * k + 31) + ' (warp ' + k + ' of the warpgroup)' };
    if (pid >= 0) return { of: (f) => own[f * stride + pid] % 8, legend: (k) => 'device ' + k + ' (mod 8)' };
    if (m >= 0) return { of: (f) => Math.floor(own[f * stride + m] * bits / 1024) % 8, legend: (k) => '128-byte line ≡ ' + k + ' (mod 8)' };
    return { of: (f) => Math.floor(f / lc) % 8, legend: (k) => 'logical rows ≡ ' + k + ' (mod 8)' };
  }
  // The class of every logical element, then of every physical cell. The
  // modes that depend on the row or the column alone are filled a row at a
  // time (a recolour of 2^18 elements is then a few copies, not 2^18 calls).
  function computeClasses() {
    const c = classer(), mode = colourMode(), size = doc.size, lc = model.lcols, rows = size / lc;
    const logical = new Int16Array(size);
    const seen = new Uint8Array(8);
    if (mode === 'row') {
      for (let r = 0; r < rows; ++r) { const k = r % 8; logical.fill(k, r * lc, (r + 1) * lc); seen[k] = 1; }
    } else if (mode === 'column' || mode === 'chunk' || (mode === 'element' && lc % 8 === 0)) {
      for (let j = 0; j < lc; ++j) { const k = c.of(j); logical[j] = k; seen[k] = 1; }
      for (let at = lc; at < size; at += lc) logical.copyWithin(at, 0, lc);
    } else {
      const of = c.of;
      for (let f = 0; f < size; ++f) { const k = of(f); logical[f] = k; seen[k] = 1; }
    }
    const used = new Set();
    for (let k = 0; k < 8; ++k) if (seen[k]) used.add(k);
    const cells = model.prow * model.pcol, physical = new Int16Array(cells).fill(-1);
    const start = model.cellStart, list = model.cellList, R = model.R;
    for (let cell = 0; cell < cells; ++cell) {
      const s = start[cell];
      if (s < start[cell + 1]) physical[cell] = logical[Math.floor(list[s] / R)];
    }
    model.logicalClasses = logical; model.physicalClasses = physical;
    renderLegend(c, used);
  }
  function renderLegend(c, used) {
    const box = $('legend');
    box.textContent = '';
    const title = document.createElement('div');
    title.className = 'legend-title';
    title.textContent = 'Colour (and pattern) = ' + ({ owner: 'owner', row: 'logical row', column: 'logical column', chunk: '16-byte chunk', element: 'element' }[colourMode()]);
    box.append(title);
    for (let k = 0; k < 8; ++k) {
      if (!used.has(k)) continue;
      const item = document.createElement('span');
      item.className = 'legend-item';
      item.append(swatch(k), document.createTextNode(c.legend(k)));
      box.append(item);
    }
    const marks = document.createElement('div');
    marks.className = 'legend-marks';
    marks.innerHTML = '<span class="mk lit"></span>selected <span class="mk witness"></span>witness <span class="mk access"></span>accessed <span class="mk conflict"></span>bank conflict <span class="mk empty"></span>idle slot';
    box.append(marks);
  }

  // ---------------------------------------------------------------- views
  function logicalGrid() {
    const shape = doc.shape, rank = shape.length, lc = model.lcols, inner = rank >= 2 ? shape[rank - 2] : model.lrows;
    const names = doc.logicalNames && doc.logicalNames.length === rank ? doc.logicalNames : null;
    return {
      rows: model.lrows, cols: lc, aspect: 1, classes: model.logicalClasses, left: rank >= 3 ? 52 : 40,
      label: (f, room) => {
        const o = f * model.R, text = ownerLabel(o, room < 6);
        return model.R > 1 ? text.split('\n')[0] + ' +' + (model.R - 1) : text;
      },
      rowTick: (i) => rank >= 3 ? unflatten(shape.slice(0, rank - 1), i).join(',') : String(i),
      colTick: (j) => String(j),
      rowWeight: (i) => (rank >= 3 && i % inner === 0 ? 3 : i % 16 === 0 ? 2 : i % 8 === 0 ? 1 : 0),
      colWeight: (j) => (j % 16 === 0 ? 2 : j % 8 === 0 ? 1 : 0),
      ariaLabel: 'logical tensor ' + shape.join(' by ') + (names ? ' (' + names.join(' × ') + ')' : '') + ': arrow keys move, Enter selects',
    };
  }
  function physicalGrid() {
    const m = model;
    const base = { rows: m.prow, cols: m.pcol, classes: m.physicalClasses, aspect: 1,
      label: (cell) => {
        const os = cellOwners(cell);
        if (!os.length) return '';
        const f = Math.floor(os[0] / m.R);
        return unflatten(doc.shape, f).join(',') + (os.length > 1 ? '+' + (os.length - 1) : '');
      },
      ariaLabel: 'physical slots: arrow keys move, Enter selects' };
    if (doc.view === 'shared') {
      const perBank = Math.max(1, 32 / doc.bits);
      return Object.assign(base, {
        aspect: Math.min(2, Math.max(0.5, doc.bits / 16)),
        rowTick: (i) => String(i),
        colTick: (j) => (j % perBank ? '' : 'b' + Math.floor(j / perBank)),
        colWeight: (j) => (j % (4 * perBank) === 0 ? 2 : j % perBank === 0 ? 1 : 0),
        rowWeight: (i) => (i % 8 === 0 ? 2 : 0),
      });
    }
    const rowName = (i) => rowLabel(m.rowKey(i), true);
    return Object.assign(base, {
      aspect: m.pcol <= 4 ? 0.5 : 1,
      left: Math.min(8 + Math.max(...[0, m.prow - 1].map((i) => rowName(i).length)) * 6, 110),
      rowTick: rowName,
      colTick: (j) => colLabel(m.colKey(j) || []),
      rowWeight: (i) => {
        const key = m.rowKey(i);
        const t = threadOfKey(key);
        if (t !== null) return t % 32 === 0 ? 2 : t % 8 === 0 ? 1 : 0;
        return i % 32 === 0 ? 2 : i % 8 === 0 ? 1 : 0;
      },
    });
  }
  // The thread a physical row is, when its axes are thread axes only.
  function threadOfKey(key) {
    if (!model.hasThreads || !key) return null;
    const w = doc.threadWeights;
    let t = 0;
    for (let k = 0; k < key.length; ++k) { const a = model.rowAx[k]; if (!w[a] && doc.axes[a] !== 'pid') return null; t += key[k] * w[a]; }
    return t;
  }
  const SHORT = { pid: 'D', wgid: 'wg', warpid: 'w', wid_in_wg: 'w', tid_in_wg: 't', tx: 't', laneid: 'l', TLane: 'L', P: 'p', TCol: 'c', F: 'f', Bank: 'b', m: 'm' };
  function rowLabel(key, short) {
    if (!key) return '';
    const t = threadOfKey(key);
    const names = key.map((v, k) => { const a = doc.axes[model.rowAx[k]]; return short ? (SHORT[a] || a) + v : a + ' ' + v; });
    if (short && t !== null) {
      const pid = doc.axes.indexOf('pid');
      const dev = model.rowAx.indexOf(pid);
      return (dev >= 0 ? 'D' + key[dev] + ' ' : '') + 'T' + t;
    }
    return names.join(short ? ' ' : ', ');
  }
  function colLabel(key) {
    return key.map((v, k) => { const a = doc.axes[model.colAx[k]]; return a === 'm' && model.hasThreads ? registerName(v) : (SHORT[a] || a) + v; }).join(' ');
  }
  function drawViews() {
    views.logical.setGrid(logicalGrid());
    views.physical.setGrid(physicalGrid());
    const names = doc.logicalNames && doc.logicalNames.length ? ' — rows: ' + doc.logicalNames.slice(0, -1).join(' × ') + ', columns: ' + doc.logicalNames[doc.logicalNames.length - 1] : '';
    $('logical-caption').textContent = doc.shape.join(' × ') + ' ' + doc.dtype + (doc.replicas > 1 ? ' · ' + doc.replicas + ' owners each' : '') + names;
    const captions = { register: 'registers: one row per thread (T = linear thread id), one column per register (PTX names)',
      tmem: 'tensor memory: TMEM lanes × 32-bit columns', device: 'devices', generic: 'physical slots',
      shared: 'shared memory: ' + model.prow + ' lines of 128 B × 32 banks, ' + doc.bits + '-bit elements (after the swizzle)' };
    $('physical-caption').textContent = (captions[doc.view] || doc.view) + (doc.view !== 'shared' ? ' · rows ' + (doc.rowAxes.join(' × ') || '—') + ', columns ' + (doc.colAxes.join(' × ') || '—') : '');
  }

  // ---------------------------------------------------------------- selection
  // Marks: cell -> kind, per view.
  function applySelection() {
    if (!model) return;
    const lm = new Map(), pm = new Map(), out = $('owners');
    const light = (f, r, kind) => { lm.set(f, kind); pm.set(model.place[f * model.R + r], kind); };
    const sel = state.sel;
    $('owner-query').value = sel.startsWith('o:') ? sel.slice(2) : '';
    let text = '', dim = true;
    if (sel.startsWith('e:') && +sel.slice(2) >= 0 && +sel.slice(2) < doc.size) {
      const f = +sel.slice(2), lines = [];
      for (let r = 0; r < model.R; ++r) { light(f, r, 'lit'); lines.push(ownerLabel(f * model.R + r, false) + '  (' + ownerText(ownerValues(f, r)) + ')'); }
      text = 'element ' + coordText(f) + ' — ' + model.R + ' owner' + (model.R > 1 ? 's' : '') + ':\n' + lines.join('\n');
    } else if (sel.startsWith('s:') && cellOfSlot(sel.slice(2)) !== null) {
      const cell = cellOfSlot(sel.slice(2)), os = cellOwners(cell), lines = [];
      for (const o of os) { const f = Math.floor(o / model.R); light(f, o % model.R, 'lit'); lines.push('element ' + coordText(f) + (model.R > 1 ? ' (replica ' + (o % model.R) + ')' : '')); }
      pm.set(cell, 'lit');
      if (os.length) {
        const o = os[0];
        text = 'slot ' + ownerLabel(o, false) + ' (' + ownerText(ownerValues(Math.floor(o / model.R), o % model.R)) + ') holds:\n' + lines.join('\n');
      } else text = 'slot ' + sel.slice(2) + ' is idle';
    } else if (sel.startsWith('o:')) {
      const query = parseQuery(sel.slice(2));
      if (query.error) text = query.error;
      else {
        const hits = [];
        for (let f = 0; f < doc.size; ++f)
          for (let r = 0; r < model.R; ++r) {
            const at = (f * model.R + r) * model.A;
            if (query.terms.every(([k, v]) => (k < 0 ? model.tid[f * model.R + r] === v : model.own[at + k] === v))) { if (!lm.has(f)) hits.push(f); light(f, r, 'lit'); }
          }
        text = sel.slice(2) + ' holds ' + hits.length + ' element' + (hits.length === 1 ? '' : 's') + ':\n' + hits.slice(0, 64).map(coordText).join(' ') + (hits.length > 64 ? ' …' : '');
      }
    } else {
      const w = (doc.diagnostics || []).find((d) => d.witness);
      if (w) return showWitness(w, false);
      text = 'Nothing selected.';
      dim = false;
    }
    out.textContent = text;
    addAccessMarks(lm, pm);
    views.logical.setMarks(lm, dim && lm.size > 0);
    views.physical.setMarks(pm, dim && pm.size > 0);
    announce(text.split('\n').slice(0, 3).join('; '));
  }
  function cellOfSlot(key) {
    const [r, c] = key.split(',').map(Number);
    if (!(r >= 0 && r < model.prow && c >= 0 && c < model.pcol)) return null;
    return r * model.pcol + c;
  }
  function parseQuery(text) {
    const terms = [];
    for (const part of text.split(/[,;]/)) {
      const p = part.trim();
      if (!p) continue;
      const m = p.match(/^([A-Za-z_]+)\s*[:= ]?\s*(\d+)$/);
      if (!m) return { error: 'write owners as "axis value", e.g. "warpid 1, laneid 5", or a thread "T36"' };
      if (m[1] === 'T' && model.hasThreads) { terms.push([-1, +m[2]]); continue; }
      const k = doc.axes.indexOf(m[1]);
      if (k < 0) return { error: 'this layout has no axis ' + m[1] + ' (it uses ' + doc.axes.join(', ') + (model.hasThreads ? ', or T for the thread id' : '') + ')' };
      terms.push([k, +m[2]]);
    }
    if (!terms.length) return { error: 'write owners as "axis value", e.g. "warpid 1"' };
    return { terms };
  }
  function showWitness(d, explicit) {
    const lm = new Map(), pm = new Map(), w = d.witness;
    for (const f of w.elements || []) if (f < doc.size) for (let r = 0; r < model.R; ++r) { lm.set(f, 'witness'); pm.set(model.place[f * model.R + r], 'witness'); }
    const parts = ['witness of the ' + d.kind + ' violation' + (explicit ? '' : ' (shown until you select something)') + ':'];
    for (const f of w.elements || []) parts.push('element ' + coordText(f));
    const slot = Object.entries(w.slot || {}).map(([a, v]) => a + ' ' + v).join(', ');
    if (slot) parts.push('slot ' + slot);
    $('owners').textContent = parts.join('\n');
    views.logical.setMarks(lm, true);
    views.physical.setMarks(pm, true);
    announce(parts.join('; '));
  }
  function select(sel) {
    state.sel = sel;
    writeHash();
    applySelection();
  }
  function announce(text) { $('announce').textContent = text; }

  // ---------------------------------------------------------------- banks
  // The warp request and its wavefronts are the engine's (doc.bankAccess);
  // the page only shows them, one phase at a time if asked.
  function addAccessMarks(lm, pm) {
    const b = doc && doc.bankAccess;
    if (!b) return;
    const phase = state.ph === '' ? -1 : +state.ph;
    b.phases.forEach((p, k) => {
      if (phase >= 0 && k !== phase) return;
      const bad = new Set(p.words.map((c, bank) => (c > 1 ? bank : -1)).filter((x) => x >= 0));
      for (const t of p.threads)
        for (const f of b.threads[t] || []) {
          // The element's bank as the engine placed it (doc.banks: line, bank).
          const kind = bad.has(doc.banks[2 * f + 1]) ? 'conflict' : 'access';
          if (!lm.has(f) || kind === 'conflict') lm.set(f, kind);
          const cell = model.place[f * model.R];
          if (!pm.has(cell) || kind === 'conflict') pm.set(cell, kind);
        }
    });
  }
  function updateBanks() {
    const panel = $('bank-panel');
    const accessDiag = doc && (doc.diagnostics || []).find((d) => d.kind === 'access');
    if (!doc || !doc.ok || (!doc.bankAccess && !accessDiag)) { panel.hidden = true; return; }
    panel.hidden = false;
    $('access-mode').value = state.acc;
    $('access-index').value = state.ai;
    $('access-vector').value = state.av;
    $('access-custom').value = state.ac;
    $('access-custom-field').hidden = state.acc !== 'custom';
    $('access-index-field').hidden = state.acc === 'custom';
    const wf = $('bank-wavefronts'), detail = $('bank-detail'), b = doc.bankAccess;
    $('access-error').textContent = accessDiag ? accessDiag.message : '';
    $('access-error').hidden = !accessDiag;
    if (!b) { wf.textContent = 'no request'; wf.dataset.wavefronts = ''; detail.textContent = ''; drawBankChart(null); return; }
    wf.textContent = b.wavefronts + ' wavefront' + (b.wavefronts === 1 ? '' : 's');
    wf.dataset.wavefronts = b.wavefronts;
    wf.className = 'wavefronts ' + (b.wavefronts > b.ideal ? 'bad' : 'good');
    const sel = $('phase-select'), want = state.ph;
    sel.innerHTML = '<option value="">all ' + b.phases.length + ' phase' + (b.phases.length === 1 ? '' : 's') + '</option>' +
      b.phases.map((p, k) => '<option value="' + k + '">phase ' + k + ': threads ' + p.threads[0] + '–' + p.threads[p.threads.length - 1] + '</option>').join('');
    sel.value = want !== '' && +want < b.phases.length ? want : '';
    const phase = sel.value === '' ? null : b.phases[+sel.value];
    const worst = (p) => Math.max(0, ...p.words);
    const conflictBanks = (p) => p.words.map((c, k) => (c > 1 ? k : -1)).filter((k) => k >= 0);
    const about = phase
      ? 'phase ' + sel.value + ' (threads ' + phase.threads[0] + '–' + phase.threads[phase.threads.length - 1] + '): ' + phase.wavefronts + ' wavefront' + (phase.wavefronts === 1 ? '' : 's') +
        (worst(phase) > 1 ? ' · ' + worst(phase) + '-way conflict on bank' + (conflictBanks(phase).length > 1 ? 's ' : ' ') + conflictBanks(phase).join(', ') : ' · conflict-free')
      : b.phases.length + ' phase' + (b.phases.length === 1 ? '' : 's') + ' of ' + b.threadsPerPhase + ' threads (' + b.bytes + ' bytes each); ideal ' + b.ideal +
        (b.wavefronts > b.ideal ? ' · ' + Math.max(...b.phases.map(worst)) + '-way conflict on bank' + (conflictBanks(b.phases.reduce((x, y) => (worst(y) > worst(x) ? y : x))).length > 1 ? 's ' : ' ') + conflictBanks(b.phases.reduce((x, y) => (worst(y) > worst(x) ? y : x))).join(', ') : ' · conflict-free');
    detail.textContent = about;
    drawBankChart(phase ? phase.words : b.phases.reduce((acc, p) => acc.map((c, k) => Math.max(c, p.words[k])), new Array(32).fill(0)));
  }
  function drawBankChart(counts) {
    const svg = $('bank-chart'), bw = 18, hmax = 60, top = 12, parts = [];
    if (!counts) { svg.innerHTML = ''; return; }
    const max = Math.max(1, ...counts);
    counts.forEach((c, b) => {
      const h = c ? Math.max(3, Math.round(hmax * c / max)) : 0, x = 4 + b * bw;
      parts.push('<rect class="bar' + (c > 1 ? ' conflict' : '') + '" data-bank="' + b + '" x="' + x + '" y="' + (top + hmax - h) + '" width="' + (bw - 3) + '" height="' + h + '"><title>bank ' + b + ': ' + c + ' distinct words</title></rect>');
      if (c) parts.push('<text class="axis" x="' + (x + (bw - 3) / 2) + '" y="' + (top + hmax - h - 2) + '" text-anchor="middle">' + c + '</text>');
      parts.push('<text class="axis" x="' + (x + (bw - 3) / 2) + '" y="' + (top + hmax + 11) + '" text-anchor="middle">' + b + '</text>');
    });
    svg.setAttribute('viewBox', '0 0 ' + (8 + 32 * bw) + ' ' + (top + hmax + 16));
    svg.setAttribute('width', 8 + 32 * bw);
    svg.innerHTML = parts.join('');
  }

  // ---------------------------------------------------------------- diagnostics
  const FIELD_OF = { parse: 'layout', arguments: 'layout', shape: 'shape', threads: 'threads', devices: 'devices', alloc: 'alloc', dtype: 'dtype', target: 'target', access: 'ac' };
  function renderDiagnostics() {
    const box = $('diagnostics'), parts = [];
    const diags = (doc.diagnostics || []).filter((d) => d.kind !== 'access');
    diags.forEach((d, i) => {
      let extra = '';
      const source = { parse: 'layout', arguments: 'layout', shape: 'shape' }[d.kind];
      if (d.column && source) {
        const line = (doc.request[source] || '').split('\n')[(d.line || 1) - 1] || '';
        extra = '<pre>' + esc(line) + '\n' + ' '.repeat(Math.max(0, d.column - 1)) + '^</pre>';
      }
      const where = d.line ? '&lt;' + (source || d.kind) + '&gt;:' + d.line + ':' + d.column + ': ' : '';
      parts.push('<div class="diag ' + esc(d.severity) + '" data-kind="' + esc(d.kind) + '"><span class="kind">' + esc(d.kind) + '</span>' + where + esc(d.message) + extra +
        (d.witness ? '<br><button type="button" data-witness="' + (doc.diagnostics || []).indexOf(d) + '">show witness</button>' : '') + '</div>');
    });
    const errors = diags.filter((d) => d.severity === 'error').length;
    if (doc.ok && !errors) parts.unshift('<div class="legal" id="legal-ok">✓ legal: in bounds, no two elements share a slot</div>');
    box.innerHTML = parts.join('');
    $('checked-by').textContent = doc.checkedBy ? '· checked by the ' + doc.checkedBy : '';
    // Each input field says what is wrong with it, in the engine's words.
    for (const [key, id] of Object.entries(inputs)) {
      const d = (doc.diagnostics || []).find((x) => FIELD_OF[x.kind] === key && x.severity === 'error');
      $(id).setAttribute('aria-invalid', d ? 'true' : 'false');
      const note = $(id + '-error');
      if (note) { note.textContent = d ? d.message : ''; note.hidden = !d; }
    }
  }

  // ---------------------------------------------------------------- evaluation
  function setDoc(d) {
    $('resolved').textContent = d.ok && d.preset ? d.resolved + (d.presetSummary ? '  — ' + d.presetSummary : '') : '';
    if (!d.ok) {
      doc = Object.assign({}, doc || {}, { diagnostics: d.diagnostics, request: d.request, ok: false });
      renderDiagnostics();
      document.querySelector('.views').classList.add('stale');
      $('bank-panel').hidden = true;
      if (!model) $('logical-caption').textContent = 'no evaluation: see the diagnostics on the left';
      return;
    }
    const t0 = performance.now();
    doc = d;
    document.querySelector('.views').classList.remove('stale');
    const timings = window.tilescopeViz.timings, lap = (key, since) => { const now = performance.now(); timings[key] = now - since; return now; };
    model = buildModel();
    let t = lap('model', t0);
    computeClasses();
    t = lap('classes', t);
    drawViews();
    t = lap('draw', t);
    renderDiagnostics();
    applySelection();
    updateBanks();
    lap('panels', t);
    timings.render = performance.now() - t0;
    document.dispatchEvent(new CustomEvent('tilescope:doc', { detail: d }));
  }
  // The server's binary form (layoutviz/Evaluation.h, packEvaluation): the
  // document's length, the document, then owners and banks as int32 views
  // of the same buffer (no parsing of megabytes of numbers). A document too
  // big for 32 bits comes as plain JSON.
  function decodeEvaluation(response) {
    if ((response.headers.get('Content-Type') || '').startsWith('application/json')) return response.json();
    return response.arrayBuffer().then((buf) => {
      const length = new DataView(buf).getUint32(0, true);
      const d = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 4, length)));
      let at = 4 + length + ((4 - ((4 + length) % 4)) % 4);
      for (const key of ['owners', 'banks']) {
        const n = d[key + 'Count'];
        if (n === undefined) continue;
        d[key] = new Int32Array(buf, at, n);
        at += 4 * n;
      }
      return d;
    });
  }
  let timer = 0;
  function scheduleEvaluate() { clearTimeout(timer); timer = setTimeout(evaluateNow, 250); }
  function evaluateNow() {
    writeHash();
    if (!live) { showSnapshotNote(); return; }
    const my = ++seq, params = new URLSearchParams();
    for (const k of EVAL_KEYS) params.set(k, state[k]);
    document.body.dataset.evaluating = '1';
    const t0 = performance.now();
    params.set('bin', '1');
    fetch('api/eval?' + params.toString())
      .then(decodeEvaluation)
      .then((d) => {
        if (my !== seq) return;
        window.tilescopeViz.timings.fetch = performance.now() - t0;
        setDoc(d);
        window.tilescopeViz.timings.load = performance.now() - t0;
        delete document.body.dataset.evaluating;
      })
      .catch((e) => {
        if (my !== seq) return;
        delete document.body.dataset.evaluating;
        $('diagnostics').innerHTML = '<div class="diag error"><span class="kind">server</span>cannot reach the tilescope server (' + esc(e.message) + '); is `tilescope viz --serve` still running?</div>';
      });
  }
  function showSnapshotNote() {
    const note = $('snapshot-note');
    const asked = (k) => String(k === 'dtype' && !doc.request.dtype ? doc.dtype : doc.request[k] === undefined ? DEFAULTS[k] : doc.request[k]);
    const differs = doc && EVAL_KEYS.some((k) => asked(k) !== String(state[k]));
    note.hidden = !differs;
    if (differs)
      note.innerHTML = 'This page is a snapshot of <code>' + esc(doc.request.layout) + '</code> evaluated by <code>tilescope viz</code>; it cannot evaluate edits by itself. Run <code>tilescope viz --serve</code> and open <a href="' + esc(shareUrl()) + '">this view on the live server</a>.';
  }

  // ---------------------------------------------------------------- inputs
  const inputs = { layout: 'layout-input', shape: 'shape-input', dtype: 'dtype-select', target: 'target-select',
    threads: 'threads-input', devices: 'devices-input', alloc: 'alloc-input', scope: 'scope-select' };
  function syncInputs() {
    for (const [k, id] of Object.entries(inputs)) if ($(id).value !== state[k]) $(id).value = state[k];
    $('color-select').value = state.color;
  }
  function fillSelects() {
    const dt = $('dtype-select');
    dt.insertAdjacentHTML('beforeend', '<option value="">auto</option>');
    for (const name of data.dtypes || []) dt.insertAdjacentHTML('beforeend', '<option>' + esc(name) + '</option>');
    const ps = $('preset-select');
    const groups = { hardware: 'Hardware fragments', lesson: 'Lessons' };
    for (const [g, label] of Object.entries(groups)) {
      const items = (data.presets || []).map((p, i) => [p, i]).filter(([p]) => p.group === g);
      if (!items.length) continue;
      ps.insertAdjacentHTML('beforeend', '<optgroup label="' + esc(label) + '">' +
        items.map(([p, i]) => '<option value="' + i + '">' + esc(p.layout + ' — ' + p.title) + '</option>').join('') + '</optgroup>');
    }
  }
  function loadPreset(i) {
    const p = data.presets[i];
    if (!p) return;
    // A preset is the main view's: the copy view (c* keys) stays.
    const copyKeys = Object.fromEntries(STATE_KEYS.filter((k) => k[0] === 'c' && k !== 'color').map((k) => [k, state[k]]));
    Object.assign(state, DEFAULTS, copyKeys, { layout: p.layout, shape: p.shape, dtype: p.dtype, target: p.target,
      threads: String(p.threads || 128), devices: String(p.devices || 1), alloc: String(p.alloc || 0), color: state.color });
    syncInputs();
    evaluateNow();
  }
  // Sets the whole view (an exercise, a link): every key not given is reset.
  function setView(values) {
    Object.assign(state, DEFAULTS, values);
    syncInputs();
    evaluateNow();
    document.dispatchEvent(new CustomEvent('tilescope:state'));
  }
  function hoverText(view, cell) {
    if (!model) return;
    let text;
    if (view === 'logical') {
      const f = cell;
      text = 'element ' + coordText(f) + ' → ' + ownerLabel(f * model.R, false) + ' (' + ownerText(ownerValues(f, 0)) + ')' + (model.R > 1 ? ' +' + (model.R - 1) + ' replicas' : '');
      if (doc.banks) text += ' · line ' + doc.banks[2 * f] + ', bank ' + doc.banks[2 * f + 1];
    } else {
      const os = cellOwners(cell);
      if (!os.length) text = 'idle slot';
      else { const o = os[0]; text = ownerLabel(o, false) + ' ← element ' + coordText(Math.floor(o / model.R)) + (os.length > 1 ? ' and ' + (os.length - 1) + ' more (aliased)' : ''); }
    }
    $('hover-status').textContent = text;
    return text;
  }
  function slotKey(cell) { return Math.floor(cell / model.pcol) + ',' + (cell % model.pcol); }
  function wire() {
    views.logical = new GridView($('logical'), {
      onPick: (f) => select(state.sel === 'e:' + f ? '' : 'e:' + f),
      onHover: (f) => hoverText('logical', f),
      onFocus: (f) => announce(hoverText('logical', f)),
    });
    views.physical = new GridView($('physical'), {
      onPick: (cell) => select(state.sel === 's:' + slotKey(cell) ? '' : 's:' + slotKey(cell)),
      onHover: (cell) => hoverText('physical', cell),
      onFocus: (cell) => announce(hoverText('physical', cell)),
      onRow: (row) => { if (model.rowKey) select('o:' + rowLabel(model.rowKey(row), false)); },
    });
    for (const [k, id] of Object.entries(inputs))
      $(id).addEventListener('input', () => {
        state[k] = $(id).value;
        $('preset-select').value = '';
        scheduleEvaluate();
      });
    $('preset-select').addEventListener('change', (e) => { if (e.target.value !== '') loadPreset(+e.target.value); });
    $('color-select').addEventListener('change', (e) => {
      state.color = e.target.value;
      writeHash();
      if (doc && doc.ok) {
        const t0 = performance.now();
        computeClasses();
        views.logical.grid.classes = model.logicalClasses; views.physical.grid.classes = model.physicalClasses;
        applySelection();
        window.tilescopeViz.timings.recolour = performance.now() - t0;
      }
    });
    $('owner-query').addEventListener('change', (e) => select(e.target.value.trim() ? 'o:' + e.target.value.trim() : ''));
    $('diagnostics').addEventListener('click', (e) => {
      const b = e.target.closest('[data-witness]');
      if (b) { state.sel = ''; writeHash(); showWitness(doc.diagnostics[+b.dataset.witness], true); }
    });
    const bankInput = (key, id) => $(id).addEventListener('input', () => { state[key] = $(id).value; state.ph = ''; scheduleEvaluate(); });
    bankInput('acc', 'access-mode'); bankInput('ai', 'access-index'); bankInput('av', 'access-vector'); bankInput('ac', 'access-custom');
    $('phase-select').addEventListener('change', (e) => { state.ph = e.target.value; writeHash(); updateBanks(); applySelection(); });
    $('phase-next').addEventListener('click', () => {
      const b = doc && doc.bankAccess;
      if (!b) return;
      state.ph = state.ph === '' ? '0' : +state.ph + 1 >= b.phases.length ? '' : String(+state.ph + 1);
      writeHash(); updateBanks(); applySelection();
      announce($('bank-detail').textContent);
    });
    for (const [id, view, factor] of [['zoom-in-l', 'logical', 1.5], ['zoom-out-l', 'logical', 1 / 1.5], ['zoom-in-p', 'physical', 1.5], ['zoom-out-p', 'physical', 1 / 1.5]])
      $(id).addEventListener('click', () => { const v = views[view]; v.zoomAt(factor, v.left + 80, v.top + 80); });
    for (const [id, view] of [['zoom-fit-l', 'logical'], ['zoom-fit-p', 'physical']])
      $(id).addEventListener('click', () => { views[view].fit(); views[view].draw(); });
    $('export-svg').addEventListener('click', () => {
      const blob = new Blob([exportSvg()], { type: 'image/svg+xml' });
      const a = document.createElement('a');
      a.href = URL.createObjectURL(blob);
      a.download = 'layout.svg';
      document.body.appendChild(a); a.click(); a.remove();
    });
    $('copy-link').addEventListener('click', () => {
      const url = shareUrl();
      const done = () => { $('hover-status').textContent = 'link copied: ' + url; };
      if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(url).then(done, () => prompt('Link to this view', url));
      else prompt('Link to this view', url);
    });
    window.addEventListener('hashchange', () => {
      const next = stateFromHash();
      const evalChanged = EVAL_KEYS.some((k) => next[k] !== state[k]);
      Object.assign(state, next);
      syncInputs();
      if (evalChanged) evaluateNow(); else if (doc && doc.ok) { computeClasses(); views.logical.grid.classes = model.logicalClasses; views.physical.grid.classes = model.physicalClasses; applySelection(); updateBanks(); }
      document.dispatchEvent(new CustomEvent('tilescope:state'));
    });
  }

  // ---------------------------------------------------------------- SVG export
  const EXPORT_CSS = 'text{font-family:monospace}.cell{stroke:#fff;stroke-width:.6}' +
    '.hdr{font-size:9px;fill:#6b7385}.lbl{font-size:7px;fill:#1d2330}' +
    '.cell.lit{stroke:#111;stroke-width:2}.cell.witness{stroke:#c62828;stroke-width:2.4}' +
    '.cell.access{stroke:#0b3d91;stroke-width:1.6}.cell.conflict{stroke:#c62828;stroke-width:2}';
  function exportSvg() {
    const l = views.logical.toSvg(10, 40);
    const p = views.physical.toSvg(l.width + 30, 40);
    const title = doc && doc.request ? doc.request.layout + '   shape ' + (doc.shape || []).join('x') + '   ' + doc.dtype : 'layout';
    return '<svg xmlns="http://www.w3.org/2000/svg" width="' + (l.width + p.width + 40) + '" height="' + (Math.max(l.height, p.height) + 56) + '">' +
      SVG_DEFS + '<style>' + EXPORT_CSS + '</style><rect width="100%" height="100%" fill="#fff"/>' +
      '<text x="10" y="18" font-size="12">' + esc(title) + '</text>' +
      '<text x="10" y="36" font-size="11" fill="#6b7385">logical</text><text x="' + (l.width + 30) + '" y="36" font-size="11" fill="#6b7385">physical</text>' +
      l.svg + p.svg + '</svg>';
  }

  // ---------------------------------------------------------------- start
  window.tilescopeViz = {
    state, exportSvg, select, setView, views, timings: {}, DEFAULTS, writeHash,
    get doc() { return doc; }, get model() { return model; },
    ownerLabel: (f, r) => ownerLabel(f * model.R + (r || 0), false),
    cellLabel: (view, cell) => views[view].grid.label(cell, 20),
    // Page coordinates of a cell's centre (for tests that click like a user).
    cellCenter(view, cell) {
      const v = views[view], g = v.grid, rect = v.canvas.getBoundingClientRect();
      v.reveal(cell); v.draw();
      const i = Math.floor(cell / g.cols), j = cell % g.cols;
      return [rect.left + v.left - v.ox + (j + 0.5) * v.cellW(), rect.top + v.top - v.oy + (i + 0.5) * v.cellH()];
    },
    marks: (view, kind) => [...views[view].marks].filter(([, k]) => !kind || k === kind).map(([c]) => c).sort((a, b) => a - b),
    slotKey: (cell) => slotKey(cell),
    registerName: (m, naming) => registerName(m, naming),
  };
  fillSelects();
  wire();
  const badge = $('mode-badge');
  badge.textContent = live ? 'live · C++ layout engine' : 'static snapshot';
  if (!live) badge.classList.add('static');
  const hasHash = location.hash.replace(/^#/, '') !== '';
  if (data.evaluation && !hasHash) {
    const r = data.evaluation.request;
    Object.assign(state, DEFAULTS, r);
    for (const k of ['threads', 'devices', 'alloc']) state[k] = String(state[k]);
    if (!state.dtype && data.evaluation.dtype) state.dtype = data.evaluation.dtype;
  } else if (hasHash) {
    Object.assign(state, stateFromHash());
  } else if (data.presets && data.presets.length) {
    const p = data.presets[0];
    Object.assign(state, { layout: p.layout, shape: p.shape, dtype: p.dtype, target: p.target, threads: String(p.threads || 128) });
  }
  syncInputs();
  if (data.evaluation) { setDoc(data.evaluation); writeHash(); showSnapshotNote(); }
  else evaluateNow();
})();
