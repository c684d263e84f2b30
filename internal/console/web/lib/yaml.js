// The YAML editor's helpers: a line diff (Myers) and its renderer, and the
// few textual edits the console makes to YAML the server printed.
//
// The console never parses YAML into objects: the server prints it
// (Accept: application/yaml) and reads it back (server-side apply takes
// YAML as is), so a YAML library would only add weight and a second
// opinion on the format. The server's printer (sigs.k8s.io/yaml) writes a
// fixed form — two-space indents, keys sorted, list items at their key's
// indent — which is what the text helpers below rely on. Nothing here
// touches the DOM except renderDiff, so the module loads under node for
// its tests (lib/yaml.test.mjs).

/** Splits text into lines; a final newline does not make an empty line. */
export function lines(text) {
  if (text === '') return [];
  const out = text.split('\n');
  if (out[out.length - 1] === '') out.pop();
  return out;
}

/**
 * diffLines returns the shortest edit script turning a into b (arrays of
 * lines, or strings split into lines) as [{op: ' '|'+'|'-', text}], with
 * deletions before insertions within a change, as `diff -u` prints them.
 * Myers' O(ND) algorithm after trimming the common ends: an edit of a
 * few lines in a document of thousands costs a few thousand steps.
 */
export function diffLines(a, b) {
  if (typeof a === 'string') a = lines(a);
  if (typeof b === 'string') b = lines(b);
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre &&
         a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const out = [];
  for (let i = 0; i < pre; i++) out.push({ op: ' ', text: a[i] });
  out.push(...myers(a.slice(pre, a.length - suf), b.slice(pre, b.length - suf)));
  for (let i = a.length - suf; i < a.length; i++) out.push({ op: ' ', text: a[i] });
  return out;
}

const MAX_EDITS = 2000;

// myers walks the edit graph forwards keeping, for each D, the furthest
// x reached on every diagonal k; the saved frontiers are then walked back
// from the end to recover the path. Each saved frontier keeps only the
// diagonals it can reach (-d..d), so memory is O(D²), not O(D·(N+M)).
function myers(a, b) {
  const n = a.length, m = b.length, max = n + m;
  if (n === 0) return b.map((text) => ({ op: '+', text }));
  if (m === 0) return a.map((text) => ({ op: '-', text }));
  const off = max + 1;
  let v = new Int32Array(2 * max + 3);
  const trace = [];
  let dEnd = -1;
  for (let d = 0; d <= max && dEnd < 0; d++) {
    // Documents with nothing in common would cost O(D²) memory; past
    // MAX_EDITS the change is shown as a replacement of the whole middle,
    // which is correct, only not minimal.
    if (d > MAX_EDITS) return [...a.map((text) => ({ op: '-', text })), ...b.map((text) => ({ op: '+', text }))];
    trace.push(v.slice(off - d, off + d + 1));
    for (let k = -d; k <= d; k += 2) {
      // Step down (an insertion) from diagonal k+1, or right (a deletion)
      // from k-1, whichever got further.
      let x = (k === -d || (k !== d && v[off + k - 1] < v[off + k + 1]))
        ? v[off + k + 1]
        : v[off + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) { x++; y++; }
      v[off + k] = x;
      if (x >= n && y >= m) { dEnd = d; break; }
    }
  }
  // Back-track: trace[d] is the frontier before step d.
  const rev = [];
  let x = n, y = m;
  for (let d = dEnd; d > 0; d--) {
    // trace[d] holds diagonals -d..d of the frontier before step d.
    const at = (kk) => trace[d][kk + d];
    const k = x - y;
    const down = (k === -d || (k !== d && at(k - 1) < at(k + 1)));
    const pk = down ? k + 1 : k - 1;
    const px = at(pk), py = px - pk;
    while (x > px + (down ? 0 : 1) && y > py + (down ? 1 : 0)) {
      rev.push({ op: ' ', text: a[x - 1] }); x--; y--;
    }
    if (down) { rev.push({ op: '+', text: b[y - 1] }); y--; }
    else { rev.push({ op: '-', text: a[x - 1] }); x--; }
  }
  while (x > 0 && y > 0) { rev.push({ op: ' ', text: a[x - 1] }); x--; y--; }
  rev.reverse();
  return groupChanges(rev);
}

// groupChanges reorders each run of changes so its deletions come before
// its insertions; Myers interleaves them, which reads badly.
function groupChanges(ops) {
  const out = [];
  let dels = [], ins = [];
  const flush = () => { out.push(...dels, ...ins); dels = []; ins = []; };
  for (const o of ops) {
    if (o.op === '-') dels.push(o);
    else if (o.op === '+') ins.push(o);
    else { flush(); out.push(o); }
  }
  flush();
  return out;
}

/** True when the diff changes nothing. */
export function unchanged(ops) {
  return ops.every((o) => o.op === ' ');
}

/**
 * foldContext groups a diff into hunks for display: changed lines with
 * `context` unchanged lines around them, and the long unchanged runs
 * between as {fold: [ops]} so the reader can open them.
 */
export function foldContext(ops, context = 3) {
  const keep = new Uint8Array(ops.length);
  ops.forEach((o, i) => {
    if (o.op === ' ') return;
    for (let j = Math.max(0, i - context); j <= Math.min(ops.length - 1, i + context); j++) keep[j] = 1;
  });
  const out = [];
  let run = [];
  const flush = () => {
    // Folding a single line saves nothing: show it.
    if (run.length === 1) out.push(run[0]);
    else if (run.length > 1) out.push({ fold: run });
    run = [];
  };
  ops.forEach((o, i) => {
    if (keep[i]) { flush(); out.push(o); } else run.push(o);
  });
  flush();
  return out;
}

/**
 * renderDiff fills el (the [data-diff] element) with the diff's lines:
 * `del` for removed, `ins` for added, `span` for context, and a button per
 * folded run of unchanged lines that unfolds it in place. Returns the
 * count of changed lines.
 */
export function renderDiff(el, ops, { context = 3 } = {}) {
  const doc = el.ownerDocument;
  el.replaceChildren();
  el.setAttribute('role', 'region');
  if (!el.hasAttribute('aria-label')) el.setAttribute('aria-label', 'Changes');
  const line = (o) => {
    const tag = o.op === '+' ? 'ins' : o.op === '-' ? 'del' : 'span';
    const n = doc.createElement(tag);
    n.className = 'diff-line';
    // The sign is part of the text so a copied diff still reads as one,
    // and so screen readers announce what changed, not just how it looks.
    // Lines are blocks, so they need no newline of their own.
    n.textContent = `${o.op} ${o.text}`;
    return n;
  };
  let changed = 0;
  for (const item of foldContext(ops, context)) {
    if (item.fold) {
      const b = doc.createElement('button');
      b.type = 'button';
      b.className = 'diff-fold';
      b.setAttribute('data-fold', String(item.fold.length));
      b.textContent = `⋯ ${item.fold.length} unchanged lines`;
      b.addEventListener('click', () => {
        b.replaceWith(...item.fold.map(line));
      });
      el.append(b);
      continue;
    }
    if (item.op !== ' ') changed++;
    el.append(line(item));
  }
  if (changed === 0) {
    const p = doc.createElement('p');
    p.className = 'diff-empty';
    p.textContent = 'No changes.';
    el.replaceChildren(p);
  }
  return changed;
}

// indentOf counts a line's leading spaces.
function indentOf(l) {
  let i = 0;
  while (i < l.length && l[i] === ' ') i++;
  return i;
}

/**
 * removeBlock removes the key at `path` (e.g. ['metadata', 'managedFields'])
 * and everything under it from YAML printed by the server. Keys are found
 * by their indent, two spaces a level; the value ends at the first line
 * back at the key's indent that is not one of its list items.
 */
export function removeBlock(text, path) {
  const ls = text.split('\n');
  const out = [];
  let depth = 0;          // how many of path's keys we are inside
  let parentIndent = -1;  // indent of the innermost matched key
  for (let i = 0; i < ls.length; i++) {
    const l = ls[i];
    const ind = indentOf(l);
    if (l.trim() !== '' && depth > 0 && ind <= parentIndent &&
        !(ind === parentIndent && l.startsWith('- ', ind))) {
      depth = 0; parentIndent = -1;
    }
    const key = path[depth];
    const want = depth * 2;
    if (ind === want && (l.startsWith(key + ':', ind) || l.startsWith(`"${key}":`, ind)) && l.trim() !== '') {
      if (depth === path.length - 1) {
        // Skip the key and its value: deeper lines, and list items at
        // its own indent.
        let j = i + 1;
        while (j < ls.length) {
          const lj = ls[j];
          const ij = indentOf(lj);
          if (lj.trim() !== '' && ij <= ind && !(ij === ind && lj.startsWith('- ', ij))) break;
          j++;
        }
        // Blank lines after the value (the text's final newline) stay.
        while (j - 1 > i && ls[j - 1].trim() === '') j--;
        i = j - 1;
        continue;
      }
      depth++; parentIndent = ind;
    }
    out.push(l);
  }
  return out.join('\n');
}

/** stripManagedFields hides metadata.managedFields, as kubectl get -o yaml does. */
export function stripManagedFields(text) {
  return removeBlock(text, ['metadata', 'managedFields']);
}

/**
 * forEditing turns the live object's YAML into the text the editor starts
 * from: no managedFields (apply refuses them), no status (apply to the
 * object ignores it, so editing it would only mislead) and no
 * resourceVersion (the edit is merged by apply, not an update that must
 * start from the latest version; a concurrent change to a field this
 * edit also sets shows up as a conflict instead).
 */
export function forEditing(text) {
  let t = removeBlock(text, ['metadata', 'managedFields']);
  t = removeBlock(t, ['metadata', 'resourceVersion']);
  t = removeBlock(t, ['status']);
  return t;
}

// scalar reads a YAML scalar as written on one line: quotes removed,
// a trailing comment dropped.
function scalar(s) {
  s = s.trim();
  if (s.startsWith('"')) {
    try { return JSON.parse(s.slice(0, s.lastIndexOf('"') + 1)); } catch { return s.slice(1, -1); }
  }
  if (s.startsWith("'")) return s.slice(1, s.lastIndexOf("'")).replaceAll("''", "'");
  const hash = s.search(/\s#/);
  if (hash >= 0) s = s.slice(0, hash).trim();
  return s;
}

/**
 * documents splits pasted text into YAML documents at `---` lines,
 * dropping empty ones (comments only count as empty).
 */
export function documents(text) {
  const docs = [];
  let cur = [];
  for (const l of text.split('\n')) {
    if (/^---(\s.*)?$/.test(l)) { docs.push(cur.join('\n')); cur = []; continue; }
    if (/^\.\.\.\s*$/.test(l)) continue;
    cur.push(l);
  }
  docs.push(cur.join('\n'));
  return docs.filter((d) => d.split('\n').some((l) => l.trim() !== '' && !l.trim().startsWith('#')));
}

/**
 * identity reads apiVersion, kind, metadata.name and metadata.namespace
 * from one document, which is all the console needs to know where to send
 * it; the server reads the rest. JSON (itself YAML) is read as JSON.
 * Missing fields come back as ''.
 */
export function identity(doc) {
  const t = doc.trim();
  if (t.startsWith('{')) {
    try {
      const o = JSON.parse(t);
      return {
        apiVersion: o.apiVersion || '', kind: o.kind || '',
        name: o.metadata?.name || '', namespace: o.metadata?.namespace || '',
        generateName: o.metadata?.generateName || '',
      };
    } catch { /* not JSON after all: read it as YAML */ }
  }
  const id = { apiVersion: '', kind: '', name: '', namespace: '', generateName: '' };
  let inMeta = false, metaIndent = -1;
  for (const l of doc.split('\n')) {
    if (l.trim() === '' || l.trim().startsWith('#')) continue;
    const ind = indentOf(l);
    const m = /^([A-Za-z"']+[A-Za-z"']*)\s*:(.*)$/.exec(l.slice(ind));
    if (ind === 0) {
      inMeta = false;
      if (!m) continue;
      const key = scalar(m[1]);
      if (key === 'apiVersion') id.apiVersion = scalar(m[2]);
      else if (key === 'kind') id.kind = scalar(m[2]);
      else if (key === 'metadata') {
        const rest = m[2].trim();
        if (rest.startsWith('{')) {
          // Flow style on one line: metadata: {name: x, namespace: y}
          for (const part of rest.replace(/^\{|\}\s*$/g, '').split(',')) {
            const [k, ...v] = part.split(':');
            const key2 = scalar(k);
            if (key2 in id) id[key2] = scalar(v.join(':'));
          }
        } else { inMeta = true; metaIndent = -1; }
      }
      continue;
    }
    if (!inMeta || !m) continue;
    if (metaIndent < 0) metaIndent = ind;
    if (ind !== metaIndent) continue;
    const key = scalar(m[1]);
    if (key === 'name' || key === 'namespace' || key === 'generateName') id[key] = scalar(m[2]);
  }
  return id;
}

/** splitAPIVersion turns "apps/v1" into {group: 'apps', version: 'v1'}, "v1" into the core group. */
export function splitAPIVersion(apiVersion) {
  const i = apiVersion.indexOf('/');
  return i < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}
