// The virtualised table every list in the console uses: rows of one fixed
// height, only those in view (plus a few either side) in the DOM, sortable
// headers and keyboard navigation, so 150,000 pods scroll as fast as ten.

import { h } from './dom.js';

const OVERSCAN = 8;
// One collator for every sort: localeCompare with options builds one per
// call, which made sorting 150,000 rows take seconds.
const collator = new Intl.Collator(undefined, { numeric: true });
let tableSeq = 0;

// table options: columns [{title, value(obj) → string|Node, sort?(obj),
// width? (a CSS grid track, e.g. '6em' or 'minmax(12em, 2fr)')}], key(obj),
// onOpen(obj) for Enter and clicks, empty (the text shown with no rows),
// rowHeight (px, default 32), label (the grid's accessible name).
export function table({ columns, key, onOpen, empty = 'No items.', rowHeight = 32, label }) {
  const id = `vt${++tableSeq}`;
  let items = [];
  let shown = [];
  let filter = null;
  let sortCol = -1;
  let sortDir = 1;
  let active = -1;
  let rendered = new Map(); // key → {el, obj}
  let frame = 0;
  let loaded = false;

  const template = columns.map((c) => c.width || 'minmax(6em, 1fr)').join(' ');
  // The header and every row are grids with the same tracks; they line up
  // only if they have the same width, so all take the body's width, which is
  // at least the tracks' minimums (the table scrolls sideways below that).
  const minWidth = `calc(${columns.map((c) => minTrack(c.width || 'minmax(6em, 1fr)')).join(' + ')} + 2px)`;
  const headers = columns.map((c, i) => {
    const btn = h('button', { type: 'button', class: 'vt-sort', onclick: () => sortBy(i) }, c.title);
    return h('div', { role: 'columnheader', class: 'vt-th', 'data-col': c.title.toLowerCase(), 'aria-sort': 'none' }, btn);
  });
  const head = h('div', { class: 'vt-head', role: 'row', style: { gridTemplateColumns: template, minWidth } }, headers);
  const body = h('div', { class: 'vt-body', role: 'rowgroup', style: { minWidth } });
  const scroller = h('div', {
    class: 'vt-scroll', role: 'grid', tabindex: 0, id,
    'aria-label': label || null, 'aria-rowcount': 1, 'aria-colcount': columns.length,
    onscroll: () => schedule(),
    onkeydown: keydown,
    onclick: click,
    onfocus: () => { if (active < 0 && shown.length) setActive(0, false); },
  }, head, body);
  const emptyEl = h('div', { class: 'vt-empty', hidden: true }, empty);
  const footer = h('div', { class: 'vt-foot', 'aria-live': 'polite' });
  const el = h('div', { class: 'vt', 'data-table': '' }, scroller, emptyEl, footer);

  function schedule() {
    if (frame) return;
    frame = requestAnimationFrame(() => { frame = 0; render(); });
  }

  function applyView() {
    let list = filter ? items.filter(filter) : items;
    if (sortCol >= 0) {
      const c = columns[sortCol];
      const f = c.sort || ((o) => {
        const v = c.value(o);
        return v instanceof Node ? v.textContent : v;
      });
      const keyed = list.map((o, i) => [f(o), i, o]);
      keyed.sort((a, b) => {
        const x = a[0];
        const y = b[0];
        if (x === y) return a[1] - b[1];
        if (typeof x === 'number' && typeof y === 'number') return (x - y) * sortDir;
        return collator.compare(String(x ?? ''), String(y ?? '')) * sortDir;
      });
      list = keyed.map((k) => k[2]);
    } else if (list === items) {
      list = items.slice();
    }
    const activeKey = active >= 0 && shown[active] ? key(shown[active]) : null;
    shown = list;
    if (activeKey !== null) {
      const i = shown.findIndex((o) => key(o) === activeKey);
      active = i >= 0 ? i : Math.min(active, shown.length - 1);
    }
    body.style.height = `${shown.length * rowHeight}px`;
    scroller.setAttribute('aria-rowcount', String(shown.length + 1));
    emptyEl.hidden = shown.length > 0;
    // Until the first items come, an empty table is not yet known empty.
    emptyEl.textContent = loaded ? empty : 'Loading\u2026';
    el.classList.toggle('is-empty', shown.length === 0);
    footer.textContent = filter && shown.length !== items.length
      ? `${shown.length} of ${items.length}`
      : `${shown.length} ${shown.length === 1 ? 'item' : 'items'}`;
    el.setAttribute('data-count', String(shown.length));
    render();
  }

  function buildRow(obj, i) {
    const k = key(obj);
    const row = h('div', {
      class: 'vt-row', role: 'row', 'data-key': k, id: `${id}-r${i}`,
      'aria-rowindex': i + 2, style: { gridTemplateColumns: template, height: `${rowHeight}px` },
    });
    for (const c of columns) {
      let v;
      try { v = c.value(obj); } catch (e) { v = ''; }
      const text = v instanceof Node ? null : String(v ?? '');
      // Cells cut long text with an ellipsis; the title shows all of it.
      row.appendChild(h('div', { role: 'gridcell', class: 'vt-td', 'data-col': c.title.toLowerCase(), title: text && text.length > 12 ? text : null }, text ?? v));
    }
    return row;
  }

  function render() {
    const headH = head.offsetHeight || rowHeight;
    const viewH = scroller.clientHeight || 800;
    const top = Math.max(0, scroller.scrollTop - headH);
    const first = Math.max(0, Math.floor(top / rowHeight) - OVERSCAN);
    const last = Math.min(shown.length, Math.ceil((top + viewH) / rowHeight) + OVERSCAN);
    const next = new Map();
    for (let i = first; i < last; i++) {
      const obj = shown[i];
      const k = key(obj);
      const old = rendered.get(k);
      let row;
      if (old && old.obj === obj && !old.stale) {
        row = old.el;
      } else {
        row = buildRow(obj, i);
      }
      row.style.transform = `translateY(${i * rowHeight}px)`;
      row.id = `${id}-r${i}`;
      row.setAttribute('aria-rowindex', String(i + 2));
      const isActive = i === active;
      row.classList.toggle('vt-active', isActive);
      row.setAttribute('aria-selected', isActive ? 'true' : 'false');
      next.set(k, { el: row, obj });
      if (row.parentNode !== body) body.appendChild(row);
    }
    for (const [k, r] of rendered) {
      if (!next.has(k) || next.get(k).el !== r.el) r.el.remove();
    }
    rendered = next;
    if (active >= 0 && active < shown.length) scroller.setAttribute('aria-activedescendant', `${id}-r${active}`);
    else scroller.removeAttribute('aria-activedescendant');
  }

  function sortBy(i) {
    if (sortCol === i) {
      if (sortDir === 1) sortDir = -1; else { sortCol = -1; sortDir = 1; }
    } else {
      sortCol = i;
      sortDir = 1;
    }
    headers.forEach((th, j) => th.setAttribute('aria-sort', j === sortCol ? (sortDir === 1 ? 'ascending' : 'descending') : 'none'));
    applyView();
  }

  function setActive(i, scroll = true) {
    if (!shown.length) return;
    active = Math.max(0, Math.min(shown.length - 1, i));
    if (scroll) {
      const headH = head.offsetHeight || rowHeight;
      const y = active * rowHeight;
      const viewH = scroller.clientHeight - headH;
      if (y < scroller.scrollTop) scroller.scrollTop = y;
      else if (y + rowHeight > scroller.scrollTop + viewH) scroller.scrollTop = y + rowHeight - viewH;
    }
    render();
  }

  function keydown(e) {
    if (e.target !== scroller) return; // keys typed into a cell's controls are theirs
    const page = Math.max(1, Math.floor((scroller.clientHeight - rowHeight) / rowHeight));
    const moves = { ArrowDown: 1, ArrowUp: -1, PageDown: page, PageUp: -page };
    if (e.key in moves) setActive((active < 0 ? -1 : active) + moves[e.key] + (active < 0 && moves[e.key] < 0 ? 1 : 0));
    else if (e.key === 'Home') setActive(0);
    else if (e.key === 'End') setActive(shown.length - 1);
    else if (e.key === 'Enter' && onOpen && active >= 0 && shown[active]) onOpen(shown[active]);
    else return;
    e.preventDefault();
  }

  function click(e) {
    const row = e.target.closest('.vt-row');
    if (!row) return;
    // Buttons, links and inputs inside a cell do their own thing.
    if (e.target.closest('button, a, input, select, textarea, summary')) return;
    const i = Number(row.getAttribute('aria-rowindex')) - 2;
    if (i >= 0 && i < shown.length) {
      active = i;
      render();
      if (onOpen) onOpen(shown[i]);
    }
  }

  if (typeof ResizeObserver !== 'undefined') new ResizeObserver(() => schedule()).observe(scroller);

  applyView();
  return {
    el,
    setItems(list) {
      loaded = true;
      items = list || [];
      applyView();
    },
    setFilter(fn) {
      filter = fn || null;
      applyView();
    },
    // refresh rebuilds the rows in view, for columns that change with time
    // alone (ages) or with data the objects do not hold; given keys, only
    // those rows.
    refresh(keys) {
      if (keys) {
        let any = false;
        for (const k of keys) {
          const r = rendered.get(k);
          if (r) { r.stale = true; any = true; }
        }
        if (!any) return;
      } else {
        for (const r of rendered.values()) r.stale = true;
      }
      render();
    },
    get items() { return shown; },
  };
}

// minTrack is a grid track's smallest width: A in minmax(A, B), the track
// itself when it is a length, and nothing for a bare fraction.
function minTrack(track) {
  const m = /^minmax\(\s*([^,]+),/.exec(track);
  const t = (m ? m[1] : track).trim();
  return /fr$|^auto$/.test(t) ? '0px' : t;
}
