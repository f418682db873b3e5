// tilescope layoutviz: draws and indexes an evaluation document produced by
// the C++ layout engine (layoutviz/Evaluation.cpp). It never evaluates a
// layout itself: in server mode every edit is sent to /api/eval, in a static
// page the one embedded evaluation is all there is.
(function () {
  'use strict';

  const data = JSON.parse(document.getElementById('tilescope-data').textContent);
  const $ = (id) => document.getElementById(id);
  const live = data.mode === 'server';
  const SHORT = { pid: 'dev', bx: 'bx', by: 'by', bz: 'bz', cbx: 'cx', cby: 'cy', cbz: 'cz',
    wgid: 'wg', warpid: 'w', wid_in_wg: 'w', tid_in_wg: 't', tx: 't', laneid: 'l',
    TLane: 'lane', P: 'p', m: 'r', TCol: 'c', F: 'f', Bank: 'b' };
  const STATE_KEYS = ['layout', 'shape', 'dtype', 'target', 'threads', 'devices', 'alloc', 'scope',
    'sel', 'color', 'acc', 'ai', 'av', 'ac'];
  const EVAL_KEYS = ['layout', 'shape', 'dtype', 'target', 'threads', 'devices', 'alloc', 'scope'];

  const state = { layout: '', shape: '', dtype: '', target: 'sm_90a', threads: '128',
    devices: '1', alloc: '0', scope: 'auto', sel: '', color: '', acc: 'column', ai: '0', av: '1', ac: '' };
  let doc = null;    // the evaluation shown
  let model = null;  // indices derived from it
  let lit = [];      // elements currently highlighted
  let seq = 0;       // latest evaluation request

  // ---------------------------------------------------------------- URL state
  function readHash() {
    const params = new URLSearchParams(location.hash.replace(/^#/, ''));
    const found = {};
    for (const k of STATE_KEYS)
      if (params.has(k)) found[k] = params.get(k);
    return found;
  }
  function writeHash() {
    const params = new URLSearchParams();
    for (const k of STATE_KEYS)
      if (state[k] !== '' && state[k] !== undefined) params.set(k, state[k]);
    history.replaceState(null, '', '#' + params.toString().replace(/\+/g, '%20'));
  }
  function shareUrl() {
    if (live) return location.href;
    const port = data.defaultPort || 8765;
    return 'http://127.0.0.1:' + port + '/' + location.hash;
  }

  // ---------------------------------------------------------------- helpers
  function esc(s) {
    return String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
  }
  const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, v));
  function unflatten(shape, flat) {
    const idx = new Array(shape.length).fill(0);
    for (let i = shape.length - 1; i >= 0; --i) { idx[i] = flat % shape[i]; flat = Math.floor(flat / shape[i]); }
    return idx;
  }
  function flatten(shape, idx) {
    if (idx.length !== shape.length) return -1;
    let flat = 0;
    for (let i = 0; i < shape.length; ++i) {
      if (!(idx[i] >= 0 && idx[i] < shape[i])) return -1;
      flat = flat * shape[i] + idx[i];
    }
    return flat;
  }
  const coordText = (flat) => '(' + unflatten(doc.shape, flat).join(', ') + ')';
  function ownerValues(flat, replica) {
    const A = doc.axes.length;
    return doc.owners[flat].slice(replica * A, replica * A + A);
  }
  const ownerText = (values) => doc.axes.map((a, k) => a + ' ' + values[k]).join(', ');
  function hue(i) { return (i * 137.508) % 360; }
  function colourOf(i) { return 'hsl(' + hue(i).toFixed(1) + ',66%,72%)'; }

  // ---------------------------------------------------------------- model
  // Where each owner sits in the physical picture, and who sits in each slot.
  function buildModel() {
    const A = doc.axes.length, R = doc.replicas, size = doc.size;
    const shape = doc.shape, lcols = shape[shape.length - 1], lrows = size / lcols;
    const idx = (names) => names.map((n) => doc.axes.indexOf(n));
    const m = { lrows, lcols, slots: new Map(), elemSlots: new Array(size), rowKeys: [], colKeys: [] };
    m.view = doc.view;
    if (m.view === 'shared') {
      const mi = doc.axes.indexOf('m');
      const bits = doc.bits;
      let maxLine = 0;
      for (let f = 0; f < size; ++f) {
        m.elemSlots[f] = [];
        for (let r = 0; r < R; ++r) {
          const mv = doc.owners[f][r * A + mi];
          const bit = mv * bits, line = Math.floor(bit / 1024), x = bit % 1024;
          maxLine = Math.max(maxLine, line);
          addSlot(m, line + ',' + x, { row: line, x, flat: f, replica: r });
          m.elemSlots[f].push(line + ',' + x);
        }
      }
      m.nrows = maxLine + 1;
      return m;
    }
    const rowAx = idx(doc.rowAxes), colAx = idx(doc.colAxes);
    const maxv = new Array(A).fill(0);
    for (let f = 0; f < size; ++f)
      for (let k = 0; k < R * A; ++k) maxv[k % A] = Math.max(maxv[k % A], doc.owners[f][k]);
    const keysOf = (axes, limit) => {
      let full = 1;
      for (const a of axes) full *= maxv[a] + 1;
      const present = new Map();
      if (full <= limit) {
        // Every combination, so idle threads and unused columns show as gaps.
        for (let i = 0; i < full; ++i) {
          const t = []; let rest = i;
          for (let k = axes.length - 1; k >= 0; --k) { t[k] = rest % (maxv[axes[k]] + 1); rest = Math.floor(rest / (maxv[axes[k]] + 1)); }
          present.set(t.join(','), t);
        }
      } else {
        for (let f = 0; f < size; ++f)
          for (let r = 0; r < R; ++r) {
            const t = axes.map((a) => doc.owners[f][r * A + a]);
            present.set(t.join(','), t);
          }
      }
      const keys = [...present.values()].sort((x, y) => { for (let k = 0; k < x.length; ++k) if (x[k] !== y[k]) return x[k] - y[k]; return 0; });
      const pos = new Map(keys.map((t, i) => [t.join(','), i]));
      return { keys, pos };
    };
    const rows = keysOf(rowAx, 4096), cols = keysOf(colAx, 1024);
    m.rowAx = rowAx; m.colAx = colAx;
    m.rowKeys = rows.keys; m.colKeys = cols.keys;
    for (let f = 0; f < size; ++f) {
      m.elemSlots[f] = [];
      for (let r = 0; r < R; ++r) {
        const o = doc.owners[f].slice(r * A, r * A + A);
        const row = rows.pos.get(rowAx.map((a) => o[a]).join(','));
        const col = cols.pos.get(colAx.map((a) => o[a]).join(','));
        const key = row + ',' + col;
        addSlot(m, key, { row, col, flat: f, replica: r });
        m.elemSlots[f].push(key);
      }
    }
    m.nrows = rows.keys.length; m.ncols = Math.max(cols.keys.length, 1);
    return m;
  }
  function addSlot(m, key, owner) {
    let s = m.slots.get(key);
    if (!s) { s = { key, row: owner.row, col: owner.col, x: owner.x, owners: [] }; m.slots.set(key, s); }
    s.owners.push([owner.flat, owner.replica]);
  }
  function rowLabel(t, short) {
    return t.map((v, k) => {
      const name = doc.axes[model.rowAx[k]];
      return short ? (SHORT[name] || name) + v : name + ' ' + v;
    }).join(short ? ' ' : ', ');
  }
  // A number per element for colouring: its thread (row of its first owner),
  // its logical row or column, or the element itself.
  function colourKey(flat) {
    // Replicated layouts give every element many threads: tell elements apart instead.
    const mode = state.color || (doc.view === 'shared' ? 'chunk' : doc.replicas > 1 ? 'element' : 'owner');
    if (mode === 'row') return Math.floor(flat / model.lcols);
    if (mode === 'chunk') return Math.floor((flat % model.lcols) * doc.bits / 128);
    if (mode === 'column') return flat % model.lcols;
    if (mode === 'element') return flat;
    const s = model.slots.get(model.elemSlots[flat][0]);
    return doc.view === 'shared' ? Math.floor(flat / model.lcols) : s.row;
  }

  // ---------------------------------------------------------------- drawing
  function drawLogical() {
    const svg = $('logical');
    const rows = model.lrows, cols = model.lcols;
    const left = 30, top = 16, parts = [];
    const c = clamp(Math.floor(Math.min((availableWidth(svg) - left) / cols, 900 / rows)), 5, 40);
    const step = Math.max(1, Math.ceil(16 / c));
    for (let j = 0; j < cols; j += step)
      parts.push('<text class="hdr" x="' + (left + j * c + c / 2) + '" y="11" text-anchor="middle">' + j + '</text>');
    const rstep = Math.max(1, Math.ceil(11 / c));
    for (let i = 0; i < rows; i += rstep)
      parts.push('<text class="hdr" x="' + (left - 4) + '" y="' + (top + i * c + c / 2 + 3) + '" text-anchor="end">' + i + '</text>');
    const labels = c >= 24;
    for (let f = 0; f < doc.size; ++f) {
      const i = Math.floor(f / cols), j = f % cols, x = left + j * c, y = top + i * c;
      parts.push('<rect class="cell" data-flat="' + f + '" x="' + x + '" y="' + y + '" width="' + c + '" height="' + c + '" fill="' + colourOf(colourKey(f)) + '"/>');
      if (labels) parts.push('<text class="lbl" x="' + (x + c / 2) + '" y="' + (y + c / 2 + 3) + '" text-anchor="middle">' + esc(logicalLabel(f)) + '</text>');
    }
    svg.setAttribute('width', left + cols * c + 4);
    svg.setAttribute('height', top + rows * c + 4);
    svg.innerHTML = parts.join('');
    model.logicalCells = new Array(doc.size);
    for (const el of svg.querySelectorAll('[data-flat]')) model.logicalCells[+el.dataset.flat] = el;
    $('logical-caption').textContent = doc.shape.join(' × ') + ' ' + doc.dtype + (doc.replicas > 1 ? ' · ' + doc.replicas + ' owners each' : '');
  }
  // Width the view's scroll box offers, so small tiles fill it and large
  // ones scroll instead of shrinking past legibility.
  function availableWidth(svg) {
    const box = svg.parentElement;
    return Math.max(200, (box && box.clientWidth ? box.clientWidth : 560) - 8);
  }
  function logicalLabel(f) {
    const s = model.slots.get(model.elemSlots[f][0]);
    if (doc.view === 'shared') return 'b' + doc.banks[f][1];
    if (doc.view === 'register') return 'T' + s.row;
    if (doc.view === 'device') return 'D' + (model.rowKeys[s.row] || [])[0];
    if (doc.view === 'tmem') return 'L' + (model.rowKeys[s.row] || []).slice(-1)[0];
    return String(s.row);
  }

  function drawPhysical() {
    const svg = $('physical'), parts = [];
    model.physCells = new Map();
    if (model.view === 'shared') {
      const bits = doc.bits, lines = model.nrows, left = 34, top = 16;
      const bankW = clamp(Math.floor((availableWidth(svg) - left) / 32), 8, 24);
      const h = clamp(Math.floor(900 / lines), 5, 18);
      for (let b = 0; b < 32; ++b) {
        parts.push('<rect class="bankcol" data-bank="' + b + '" x="' + (left + b * bankW) + '" y="' + top + '" width="' + bankW + '" height="' + lines * h + '" fill="#f3f5f8"/>');
        if (b % 4 === 0 || bankW >= 16) parts.push('<text class="hdr" x="' + (left + b * bankW + bankW / 2) + '" y="11" text-anchor="middle">' + b + '</text>');
      }
      const rstep = Math.max(1, Math.ceil(11 / h));
      for (let l = 0; l < lines; l += rstep)
        parts.push('<text class="hdr" x="' + (left - 4) + '" y="' + (top + l * h + h / 2 + 3) + '" text-anchor="end">' + l + '</text>');
      const w = bankW * bits / 32;
      for (const s of model.slots.values()) {
        const f = s.owners[0][0];
        parts.push('<rect class="cell' + (s.owners.length > 1 ? ' aliased' : '') + '" data-slot="' + s.key + '" x="' + (left + s.x / 32 * bankW) + '" y="' + (top + s.row * h) + '" width="' + w + '" height="' + h + '" fill="' + colourOf(colourKey(f)) + '"/>');
      }
      for (let b = 1; b < 32; ++b)
        parts.push('<line class="banksep" x1="' + (left + b * bankW) + '" x2="' + (left + b * bankW) + '" y1="' + top + '" y2="' + (top + lines * h) + '"/>');
      svg.setAttribute('width', left + 32 * bankW + 4);
      svg.setAttribute('height', top + lines * h + 4);
      $('physical-caption').textContent = 'shared memory: ' + lines + ' lines of 128 B × 32 banks, ' + doc.bits + '-bit elements';
    } else {
      const nr = model.nrows, nc = model.ncols;
      const longest = model.rowKeys.reduce((mx, t) => Math.max(mx, rowLabel(t, true).length), 1);
      const left = Math.min(8 + longest * 6, 120), top = 16;
      const w = clamp(Math.floor((availableWidth(svg) - left) / nc), 6, 44), h = clamp(Math.floor(900 / nr), 4, 20);
      const cstep = Math.max(1, Math.ceil(22 / w));
      model.colKeys.forEach((t, j) => {
        if (j % cstep) return;
        const prefix = (name) => (name === 'm' && doc.view !== 'register' ? 'm' : SHORT[name] || '');
        const text = t.map((v, k) => prefix(doc.axes[model.colAx[k]]) + v).join(' ');
        parts.push('<text class="hdr" x="' + (left + j * w + w / 2) + '" y="11" text-anchor="middle">' + esc(text) + '</text>');
      });
      const rstep = Math.max(1, Math.ceil(10 / h));
      model.rowKeys.forEach((t, i) => {
        if (i % rstep) return;
        parts.push('<text class="hdr" data-row="' + i + '" x="' + (left - 4) + '" y="' + (top + i * h + h / 2 + 3) + '" text-anchor="end">' + esc(rowLabel(t, true)) + '</text>');
      });
      const labels = w >= 30 && h >= 12;
      for (let i = 0; i < nr; ++i)
        for (let j = 0; j < nc; ++j) {
          const key = i + ',' + j, s = model.slots.get(key), x = left + j * w, y = top + i * h;
          if (!s) { parts.push('<rect class="empty" x="' + x + '" y="' + y + '" width="' + w + '" height="' + h + '"/>'); continue; }
          const f = s.owners[0][0];
          parts.push('<rect class="cell' + (s.owners.length > 1 ? ' aliased' : '') + '" data-slot="' + key + '" x="' + x + '" y="' + y + '" width="' + w + '" height="' + h + '" fill="' + colourOf(colourKey(f)) + '"/>');
          if (labels) parts.push('<text class="lbl" x="' + (x + w / 2) + '" y="' + (y + h / 2 + 3) + '" text-anchor="middle">' + unflatten(doc.shape, f).join(',') + (s.owners.length > 1 ? '+' + (s.owners.length - 1) : '') + '</text>');
        }
      svg.setAttribute('width', left + nc * w + 4);
      svg.setAttribute('height', top + nr * h + 4);
      const names = { register: 'registers', tmem: 'tensor memory', device: 'devices', generic: 'physical slots' };
      $('physical-caption').textContent = (names[doc.view] || doc.view) + ': rows ' + (doc.rowAxes.join(' × ') || '—') + ', columns ' + (doc.colAxes.join(' × ') || '—');
    }
    svg.innerHTML = parts.join('');
    for (const el of svg.querySelectorAll('[data-slot]')) model.physCells.set(el.dataset.slot, el);
    model.bankCols = [...svg.querySelectorAll('.bankcol')];
  }

  // ---------------------------------------------------------------- selection
  function clearLit() {
    for (const el of lit) el.classList.remove('lit', 'witness');
    lit = [];
    $('logical').classList.remove('dim');
    $('physical').classList.remove('dim');
  }
  function light(el, cls) { if (el) { el.classList.add(cls); lit.push(el); } }
  function lightElement(f, cls) {
    light(model.logicalCells[f], cls);
    for (const key of model.elemSlots[f]) light(model.physCells.get(key), cls);
  }

  function applySelection() {
    if (!model) return;
    clearLit();
    const out = $('owners');
    const sel = state.sel;
    $('owner-query').value = sel.startsWith('o:') ? sel.slice(2) : '';
    if (!sel) {
      const w = (doc.diagnostics || []).find((d) => d.witness);
      if (w) showWitness(w, false);
      else out.innerHTML = '<span class="head">Nothing selected.</span>';
      return;
    }
    $('logical').classList.add('dim');
    $('physical').classList.add('dim');
    if (sel.startsWith('e:')) {
      const f = +sel.slice(2);
      if (!(f >= 0 && f < doc.size)) { state.sel = ''; return applySelection(); }
      lightElement(f, 'lit');
      const lines = [];
      for (let r = 0; r < doc.replicas; ++r) lines.push(ownerText(ownerValues(f, r)));
      out.innerHTML = '<span class="head">element ' + esc(coordText(f)) + ' — ' + doc.replicas + ' owner' + (doc.replicas > 1 ? 's' : '') + ':</span>\n' + esc(lines.join('\n'));
    } else if (sel.startsWith('s:')) {
      const s = model.slots.get(sel.slice(2));
      if (!s) { state.sel = ''; return applySelection(); }
      light(model.physCells.get(s.key), 'lit');
      const lines = [];
      for (const [f, r] of s.owners) {
        light(model.logicalCells[f], 'lit');
        lines.push('element ' + coordText(f) + (doc.replicas > 1 ? ' (replica ' + r + ')' : ''));
      }
      const [f0, r0] = s.owners[0];
      out.innerHTML = '<span class="head">slot ' + esc(ownerText(ownerValues(f0, r0))) + ' holds:</span>\n' + esc(lines.join('\n'));
    } else if (sel.startsWith('o:')) {
      const query = parseQuery(sel.slice(2));
      if (query.error) { out.textContent = query.error; return; }
      const A = doc.axes.length, hits = [];
      for (let f = 0; f < doc.size; ++f)
        for (let r = 0; r < doc.replicas; ++r) {
          if (query.terms.every(([k, v]) => doc.owners[f][r * A + k] === v)) {
            hits.push(f);
            light(model.logicalCells[f], 'lit');
            light(model.physCells.get(model.elemSlots[f][r]), 'lit');
          }
        }
      const shown = hits.slice(0, 64).map(coordText).join(' ');
      out.innerHTML = '<span class="head">' + esc(sel.slice(2)) + ' holds ' + hits.length + ' element' + (hits.length === 1 ? '' : 's') + ':</span>\n' + esc(shown) + (hits.length > 64 ? ' …' : '');
    }
  }
  function parseQuery(text) {
    const terms = [];
    for (const part of text.split(/[,;]/)) {
      const p = part.trim();
      if (!p) continue;
      const m = p.match(/^([A-Za-z_]+)\s*[:= ]\s*(\d+)$/);
      if (!m) return { error: 'write owners as "axis value", e.g. "warpid 1, laneid 5"' };
      const k = doc.axes.indexOf(m[1]);
      if (k < 0) return { error: 'this layout has no axis ' + m[1] + ' (it uses ' + doc.axes.join(', ') + ')' };
      terms.push([k, +m[2]]);
    }
    if (!terms.length) return { error: 'write owners as "axis value", e.g. "warpid 1"' };
    return { terms };
  }
  function showWitness(d, explicit) {
    clearLit();
    $('logical').classList.add('dim');
    $('physical').classList.add('dim');
    const w = d.witness;
    for (const f of w.elements || []) if (f < doc.size) lightElement(f, 'witness');
    const parts = ['<span class="head">witness of the ' + esc(d.kind) + ' violation' + (explicit ? '' : ' (shown until you select something)') + ':</span>'];
    for (const f of w.elements || []) parts.push('element ' + esc(coordText(f)));
    const slot = Object.entries(w.slot || {}).map(([a, v]) => a + ' ' + v).join(', ');
    if (slot) parts.push('slot ' + esc(slot));
    $('owners').innerHTML = parts.join('\n');
  }
  function select(sel) {
    state.sel = sel;
    writeHash();
    applySelection();
  }

  // ---------------------------------------------------------------- banks
  function accessPattern() {
    const mode = state.acc, v = clamp(+state.av || 1, 1, 64), at = Math.max(0, +state.ai || 0);
    const threads = [];
    if (mode === 'custom') {
      const entries = state.ac.split(';').map((s) => s.trim()).filter(Boolean).slice(0, 32);
      for (const e of entries) {
        const idx = e.split(/[ ,]+/).filter(Boolean).map(Number);
        const f = flatten(doc.shape, idx);
        const list = [];
        if (f >= 0) for (let k = 0; k < v && (f % model.lcols) + k < model.lcols; ++k) list.push(f + k);
        threads.push(list);
      }
      return threads;
    }
    for (let t = 0; t < 32; ++t) {
      const list = [];
      const i = mode === 'column' ? t : at, j0 = mode === 'column' ? at : t * v;
      if (i < model.lrows)
        for (let k = 0; k < v; ++k) if (j0 + k < model.lcols) list.push(i * model.lcols + j0 + k);
      threads.push(list);
    }
    return threads;
  }
  function updateBanks() {
    const panel = $('bank-panel');
    if (!doc || !doc.ok || !doc.banks) { panel.hidden = true; return; }
    panel.hidden = false;
    $('access-mode').value = state.acc;
    $('access-index').value = state.ai;
    $('access-vector').value = state.av;
    $('access-custom').value = state.ac;
    $('access-custom-field').hidden = state.acc !== 'custom';
    $('access-index-field').hidden = state.acc === 'custom';
    for (const el of document.querySelectorAll('.access, .conflict')) el.classList.remove('access', 'conflict');
    const threads = accessPattern();
    const perBank = Array.from({ length: 32 }, () => new Set());
    const wordsPerElement = Math.max(1, doc.bits / 32);
    const wordsOf = (f) => {
      const [line, bank] = doc.banks[f], first = line * 32 + bank, out = [];
      for (let k = 0; k < wordsPerElement; ++k) out.push(first + k);
      return out;
    };
    const all = new Set();
    threads.forEach((list) => list.forEach((f) => wordsOf(f).forEach((w) => { perBank[w % 32].add(w); all.add(w); })));
    const counts = perBank.map((s) => s.size);
    const wavefronts = Math.max(0, ...counts);
    const ideal = all.size ? Math.ceil(all.size / 32) : 0;
    const conflictBanks = counts.map((c, b) => (c > ideal ? b : -1)).filter((b) => b >= 0);
    threads.forEach((list) => list.forEach((f) => {
      const bad = wordsOf(f).some((w) => counts[w % 32] > ideal);
      const cls = bad ? 'conflict' : 'access';
      if (model.logicalCells[f]) model.logicalCells[f].classList.add(cls);
      for (const key of model.elemSlots[f]) { const el = model.physCells.get(key); if (el) el.classList.add(cls); }
    }));
    for (const el of model.bankCols || []) el.classList.toggle('conflict', conflictBanks.includes(+el.dataset.bank));
    const wf = $('bank-wavefronts');
    wf.textContent = wavefronts + ' wavefront' + (wavefronts === 1 ? '' : 's');
    wf.dataset.wavefronts = wavefronts;
    wf.className = 'wavefronts ' + (wavefronts > ideal ? 'bad' : 'good');
    const active = threads.filter((l) => l.length).length;
    $('bank-detail').textContent = active + ' threads, ' + all.size + ' distinct 4-byte words; ideal ' + ideal +
      (conflictBanks.length ? ' · ' + wavefronts + '-way conflict on bank' + (conflictBanks.length > 1 ? 's ' : ' ') + conflictBanks.join(', ') : ' · conflict-free');
    drawBankChart(counts, ideal);
  }
  function drawBankChart(counts, ideal) {
    const svg = $('bank-chart'), bw = 18, hmax = 60, top = 12, max = Math.max(1, ...counts), parts = [];
    counts.forEach((c, b) => {
      const h = c ? Math.max(3, Math.round(hmax * c / max)) : 0, x = 4 + b * bw;
      parts.push('<rect class="bar' + (c > ideal ? ' conflict' : '') + '" data-bank="' + b + '" x="' + x + '" y="' + (top + hmax - h) + '" width="' + (bw - 3) + '" height="' + h + '"><title>bank ' + b + ': ' + c + ' distinct words</title></rect>');
      if (c) parts.push('<text class="axis" x="' + (x + (bw - 3) / 2) + '" y="' + (top + hmax - h - 2) + '" text-anchor="middle">' + c + '</text>');
      parts.push('<text class="axis" x="' + (x + (bw - 3) / 2) + '" y="' + (top + hmax + 11) + '" text-anchor="middle">' + b + '</text>');
    });
    svg.setAttribute('width', 8 + 32 * bw);
    svg.setAttribute('height', top + hmax + 16);
    svg.innerHTML = parts.join('');
  }

  // ---------------------------------------------------------------- diagnostics
  function renderDiagnostics() {
    const box = $('diagnostics'), parts = [];
    const diags = doc.diagnostics || [];
    diags.forEach((d, i) => {
      let extra = '';
      if (d.column && (d.kind === 'parse' || d.kind === 'shape')) {
        const text = d.kind === 'parse' ? (doc.request.layout || '') : (doc.request.shape || '');
        const line = text.split('\n')[(d.line || 1) - 1] || '';
        extra = '<pre>' + esc(line) + '\n' + ' '.repeat(Math.max(0, d.column - 1)) + '^</pre>';
      }
      const where = d.line ? (d.kind === 'shape' ? '&lt;shape&gt;' : '&lt;layout&gt;') + ':' + d.line + ':' + d.column + ': ' : '';
      parts.push('<div class="diag ' + esc(d.severity) + '" data-kind="' + esc(d.kind) + '"><span class="kind">' + esc(d.kind) + '</span>' + where + esc(d.message) + extra +
        (d.witness ? '<br><button type="button" data-witness="' + i + '">show witness</button>' : '') + '</div>');
    });
    const errors = diags.filter((d) => d.severity === 'error').length;
    if (doc.ok && !errors) parts.unshift('<div class="legal" id="legal-ok">✓ legal: in bounds, no two elements share a slot</div>');
    box.innerHTML = parts.join('');
    $('checked-by').textContent = doc.checkedBy ? '· checked by the ' + doc.checkedBy : '';
  }

  // ---------------------------------------------------------------- evaluation
  function setDoc(d) {
    renderDocFields(d);
    if (!d.ok) {
      doc = Object.assign({}, doc || {}, { diagnostics: d.diagnostics, request: d.request, ok: false });
      renderDiagnostics();
      document.querySelector('.views').classList.add('stale');
      $('bank-panel').hidden = true;
      if (!model) {
        // Nothing evaluated yet: say why the views are empty.
        for (const id of ['logical', 'physical']) {
          $(id).setAttribute('width', 320); $(id).setAttribute('height', 40);
          $(id).innerHTML = '<text class="hdr" x="4" y="20">no evaluation: see the diagnostics on the left</text>';
        }
      }
      return;
    }
    doc = d;
    document.querySelector('.views').classList.remove('stale');
    model = buildModel();
    drawLogical();
    drawPhysical();
    renderDiagnostics();
    applySelection();
    updateBanks();
  }
  function renderDocFields(d) {
    $('resolved').textContent = d.ok ? (d.preset ? d.resolved + (d.presetSummary ? '  — ' + d.presetSummary : '') : '') : '';
  }
  let timer = 0;
  function scheduleEvaluate() {
    clearTimeout(timer);
    timer = setTimeout(evaluateNow, 250);
  }
  function evaluateNow() {
    writeHash();
    if (!live) { showSnapshotNote(); return; }
    const my = ++seq, params = new URLSearchParams();
    for (const k of EVAL_KEYS) params.set(k, state[k]);
    document.body.dataset.evaluating = '1';
    fetch('api/eval?' + params.toString())
      .then((r) => r.json())
      .then((d) => { if (my === seq) { setDoc(d); delete document.body.dataset.evaluating; } })
      .catch((e) => {
        if (my !== seq) return;
        delete document.body.dataset.evaluating;
        $('diagnostics').innerHTML = '<div class="diag error"><span class="kind">server</span>cannot reach the tilescope server (' + esc(e.message) + '); is `tilescope viz --serve` still running?</div>';
      });
  }
  function showSnapshotNote() {
    const note = $('snapshot-note');
    const asked = (k) => (k === 'dtype' && !doc.request.dtype ? doc.dtype : doc.request[k]);
    const differs = doc && EVAL_KEYS.some((k) => String(asked(k)) !== String(state[k]));
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
    Object.assign(state, { layout: p.layout, shape: p.shape, dtype: p.dtype, target: p.target,
      threads: String(p.threads || 128), devices: String(p.devices || 1), alloc: String(p.alloc || 0),
      scope: 'auto', sel: '' });
    syncInputs();
    evaluateNow();
  }
  function wire() {
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
      if (doc && doc.ok) { drawLogical(); drawPhysical(); applySelection(); updateBanks(); }
    });
    $('owner-query').addEventListener('change', (e) => select(e.target.value.trim() ? 'o:' + e.target.value.trim() : ''));
    $('logical').addEventListener('click', (e) => {
      const el = e.target.closest('[data-flat]');
      if (el) select(state.sel === 'e:' + el.dataset.flat ? '' : 'e:' + el.dataset.flat);
    });
    $('physical').addEventListener('click', (e) => {
      const cell = e.target.closest('[data-slot]');
      if (cell) return select(state.sel === 's:' + cell.dataset.slot ? '' : 's:' + cell.dataset.slot);
      const hdr = e.target.closest('[data-row]');
      if (hdr) select('o:' + rowLabel(model.rowKeys[+hdr.dataset.row], false));
    });
    $('diagnostics').addEventListener('click', (e) => {
      const b = e.target.closest('[data-witness]');
      if (b) { state.sel = ''; writeHash(); showWitness(doc.diagnostics[+b.dataset.witness], true); }
    });
    const hover = (e) => {
      if (!model) return;
      const el = e.target.closest('[data-flat],[data-slot]');
      if (!el) return;
      let text;
      if (el.dataset.flat !== undefined) {
        const f = +el.dataset.flat;
        text = 'element ' + coordText(f) + ' → ' + ownerText(ownerValues(f, 0)) + (doc.replicas > 1 ? ' (+' + (doc.replicas - 1) + ' replicas)' : '');
        if (doc.banks) text += ' · line ' + doc.banks[f][0] + ', bank ' + doc.banks[f][1];
      } else {
        const s = model.slots.get(el.dataset.slot), [f, r] = s.owners[0];
        text = ownerText(ownerValues(f, r)) + ' ← element ' + coordText(f) + (s.owners.length > 1 ? ' and ' + (s.owners.length - 1) + ' more (aliased)' : '');
      }
      $('hover-status').textContent = text;
    };
    $('logical').addEventListener('mouseover', hover);
    $('physical').addEventListener('mouseover', hover);
    const bankInput = (key, id) => $(id).addEventListener('input', () => { state[key] = $(id).value; writeHash(); updateBanks(); });
    bankInput('acc', 'access-mode'); bankInput('ai', 'access-index'); bankInput('av', 'access-vector'); bankInput('ac', 'access-custom');
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
      const h = readHash();
      const evalChanged = EVAL_KEYS.some((k) => k in h && h[k] !== state[k]);
      Object.assign(state, h);
      syncInputs();
      if (evalChanged) evaluateNow(); else { applySelection(); updateBanks(); }
    });
  }

  // ---------------------------------------------------------------- SVG export
  const EXPORT_CSS = 'text{font-family:monospace}.cell{stroke:#fff;stroke-width:.6}.empty{fill:#eef0f4}' +
    '.hdr{font-size:9px;fill:#6b7385}.lbl{font-size:9px;fill:#1d2330}.banksep{stroke:#b9c0cc;stroke-width:.6}' +
    '.dim .cell{opacity:.16}.cell.lit{opacity:1;stroke:#111;stroke-width:2}.cell.witness{opacity:1;stroke:#c62828;stroke-width:2.4}' +
    '.cell.aliased{stroke:#c62828;stroke-dasharray:3 2}.cell.access{stroke:#0b3d91;stroke-width:1.6}.cell.conflict{stroke:#c62828;stroke-width:2}.bankcol.conflict{fill:#fbd5d5}';
  function exportSvg() {
    const l = $('logical'), p = $('physical');
    const lw = +l.getAttribute('width') || 0, lh = +l.getAttribute('height') || 0;
    const pw = +p.getAttribute('width') || 0, ph = +p.getAttribute('height') || 0;
    const title = (doc && doc.request ? doc.request.layout + '   shape ' + (doc.shape || []).join('x') + '   ' + doc.dtype : 'layout');
    const g = (svg) => (svg.classList.contains('dim') ? '<g class="dim">' : '<g>') + svg.innerHTML + '</g>';
    return '<svg xmlns="http://www.w3.org/2000/svg" width="' + (lw + pw + 40) + '" height="' + (Math.max(lh, ph) + 56) + '">' +
      '<style>' + EXPORT_CSS + '</style><rect width="100%" height="100%" fill="#fff"/>' +
      '<text x="10" y="18" font-size="12">' + esc(title) + '</text>' +
      '<text x="10" y="36" font-size="11" fill="#6b7385">logical</text><text x="' + (lw + 30) + '" y="36" font-size="11" fill="#6b7385">physical</text>' +
      '<g transform="translate(10,40)">' + g(l) + '</g><g transform="translate(' + (lw + 30) + ',40)">' + g(p) + '</g></svg>';
  }

  // ---------------------------------------------------------------- start
  fillSelects();
  wire();
  const badge = $('mode-badge');
  badge.textContent = live ? 'live · C++ layout engine' : 'static snapshot';
  if (!live) badge.classList.add('static');
  const fromHash = readHash();
  if (data.evaluation) {
    Object.assign(state, data.evaluation.request);
    for (const k of ['threads', 'devices', 'alloc']) state[k] = String(state[k]);
    if (!state.dtype && data.evaluation.dtype) state.dtype = data.evaluation.dtype;
  } else if (data.presets && data.presets.length && !fromHash.layout) {
    const p = data.presets[0];
    Object.assign(state, { layout: p.layout, shape: p.shape, dtype: p.dtype, target: p.target, threads: String(p.threads || 128) });
  }
  Object.assign(state, fromHash);
  syncInputs();
  if (data.evaluation) { setDoc(data.evaluation); writeHash(); showSnapshotNote(); }
  else evaluateNow();

  window.tilescopeViz = { state, exportSvg, get doc() { return doc; }, select };
})();
